//! A loopback HTTP/1.1 server that speaks just enough of the S3 REST protocol (path-style
//! `PUT` and `GET` of an object) to run `object_store`'s real S3 client against it, with
//! modes that make uploads fail.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How the server answers a `PUT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PutMode {
    /// Store the body and answer 200.
    Store,
    /// Read the body, store nothing and answer 500.
    Fail,
    /// Read the request head and part of the body, then close the connection.
    Drop,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub(super) method: String,
    /// The path, without query.
    pub(super) path: String,
    pub(super) authorization: Option<String>,
}

#[derive(Debug, Default)]
pub(super) struct State {
    /// Object bodies by path (`/bucket/key`).
    pub(super) objects: HashMap<String, Vec<u8>>,
    pub(super) requests: Vec<Seen>,
}

/// The running server; stopped on drop.
pub(super) struct S3Server {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl S3Server {
    pub(super) async fn start(mode: PutMode) -> S3Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = Arc::clone(&shared);
                tokio::spawn(async move {
                    let _ = serve(stream, state, mode).await;
                });
            }
        });
        S3Server { addr, state, task }
    }

    /// `http://127.0.0.1:<port>`.
    pub(super) fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("state")
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves one connection, request after request (keep-alive).
async fn serve(stream: TcpStream, state: Arc<Mutex<State>>, mode: PutMode) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let mut words = line.split_whitespace();
        let method = words.next().unwrap_or_default().to_owned();
        let target = words.next().unwrap_or_default();
        let path = target.split('?').next().unwrap_or_default().to_owned();
        let mut headers = HashMap::new();
        loop {
            let mut header = String::new();
            stream.read_line(&mut header).await?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
            }
        }
        state.lock().expect("state").requests.push(Seen {
            method: method.clone(),
            path: path.clone(),
            authorization: headers.get("authorization").cloned(),
        });
        if method == "PUT" && mode == PutMode::Drop {
            // Half a body, then the connection goes away.
            let mut some = [0_u8; 16];
            let _ = stream.read(&mut some).await?;
            return Ok(());
        }
        let body = read_body(&mut stream, &headers).await?;
        let (status, extra, payload): (&str, Vec<(&str, String)>, Vec<u8>) = match method.as_str() {
            "PUT" if mode == PutMode::Fail => (
                "500 Internal Server Error",
                Vec::new(),
                b"<Error><Code>InternalError</Code></Error>".to_vec(),
            ),
            "PUT" => {
                let etag = format!("\"{}\"", nl2sql_state::sha256_hex(&body));
                state.lock().expect("state").objects.insert(path, body);
                ("200 OK", vec![("ETag", etag)], Vec::new())
            }
            "GET" => match state.lock().expect("state").objects.get(&path).cloned() {
                Some(object) => (
                    "200 OK",
                    vec![
                        ("ETag", format!("\"{}\"", nl2sql_state::sha256_hex(&object))),
                        ("Last-Modified", "Tue, 15 Nov 1994 08:12:31 GMT".to_owned()),
                        ("Content-Type", "application/octet-stream".to_owned()),
                    ],
                    object,
                ),
                None => (
                    "404 Not Found",
                    Vec::new(),
                    b"<Error><Code>NoSuchKey</Code></Error>".to_vec(),
                ),
            },
            _ => ("501 Not Implemented", Vec::new(), Vec::new()),
        };
        let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", payload.len());
        for (name, value) in extra {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let out = stream.get_mut();
        out.write_all(head.as_bytes()).await?;
        out.write_all(&payload).await?;
        out.flush().await?;
    }
}

/// The request body: by `Content-Length`, or chunked.
async fn read_body(
    stream: &mut BufReader<TcpStream>,
    headers: &HashMap<String, String>,
) -> std::io::Result<Vec<u8>> {
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            stream.read_line(&mut size).await?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).await?;
            if size == 0 {
                return Ok(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await?;
    Ok(body)
}
