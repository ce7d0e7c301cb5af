//! Error responses (spec: interfaces.md §3.2): every failure is an HTTP status with the
//! body `ErrorResponse {error_code, message, details?}`. Messages are fixed texts or the
//! pipeline's safe messages, never internal error text or secrets.

use axum::Json;
use axum::extract::FromRequest;
use axum::extract::rejection::JsonRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nl2sql_state::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// A stable code: a pipeline code (`SECURITY_VIOLATION`, `PIPELINE_TIMEOUT`, …) or one
    /// of the server's (`BAD_REQUEST`, `UNAUTHORIZED`, `NOT_FOUND`, `CONFLICT`,
    /// `PAYLOAD_TOO_LARGE`, `METHOD_NOT_ALLOWED`, `NOT_IMPLEMENTED`, `INTERNAL_ERROR`).
    pub error_code: String,
    /// What went wrong, safe to show.
    pub message: String,
    /// More, when there is more (for a failed run: its trace id, status and errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// An error a handler returns: a status and an [`ErrorResponse`].
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: ErrorResponse,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorResponse {
                error_code: code.to_owned(),
                message: message.into(),
                details: None,
            },
        }
    }

    /// The same error with `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.body.details = Some(details);
        self
    }

    /// 400 `BAD_REQUEST`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "BAD_REQUEST", message)
    }

    /// 401 `UNAUTHORIZED`.
    pub fn unauthorized() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "A valid API key is required (Authorization: Bearer KEY, or X-API-Key: KEY).",
        )
    }

    /// 403 `SECURITY_VIOLATION`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::SecurityViolation.as_str(),
            message,
        )
    }

    /// 404 `NOT_FOUND`.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }

    /// 409 `CONFLICT`.
    pub fn conflict(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::CONFLICT, "CONFLICT", message)
    }

    /// 503 `SERVICE_UNAVAILABLE`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ServiceUnavailable.as_str(),
            message,
        )
    }

    /// 500 `INTERNAL_ERROR`, with a fixed message (the cause goes to the log only).
    pub fn internal() -> Self {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL_ERROR",
            "The server encountered an unexpected error.",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (self.status, Json(self.body)).into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// The HTTP status of a pipeline error code that stopped a run (interfaces.md §3.2).
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::SecurityViolation | ErrorCode::IntentViolation => StatusCode::FORBIDDEN,
        ErrorCode::PipelineTimeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::ServiceUnavailable | ErrorCode::Cancelled => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::InvalidPlanStructure
        | ErrorCode::SchemaRetrievalFailed
        | ErrorCode::TableNotFound
        | ErrorCode::ColumnNotFound
        | ErrorCode::InvalidAliasUsage
        | ErrorCode::MissingGroupBy
        | ErrorCode::InvalidDateFormat
        | ErrorCode::InvalidNumericValue
        | ErrorCode::JoinTableNotInPlan
        | ErrorCode::JoinMissingOnClause
        | ErrorCode::PlanningFailure
        | ErrorCode::AmbiguousQuestion
        | ErrorCode::ValueNotFound
        | ErrorCode::SqlGenFailed
        | ErrorCode::SqlSyntaxError
        | ErrorCode::UnsupportedSql
        | ErrorCode::PerformanceWarning
        | ErrorCode::ExecutionError
        | ErrorCode::ExecutionTimeout
        | ErrorCode::MissingPlan
        | ErrorCode::MissingSql => StatusCode::BAD_REQUEST,
        // Every code is listed (no wildcard): a new code must choose its status here.
        ErrorCode::MissingLlm
        | ErrorCode::MissingDatasourceId
        | ErrorCode::InvalidState
        | ErrorCode::SafeguardViolation
        | ErrorCode::DbExecutionError
        | ErrorCode::ExecutorCrash
        | ErrorCode::ValidatorCrash
        | ErrorCode::RefinerFailed
        | ErrorCode::PhysicalValidatorFailed
        | ErrorCode::PlanFeedback
        | ErrorCode::UnknownError
        | ErrorCode::AggregatorFailed
        | ErrorCode::OrchestratorCrash
        | ErrorCode::ExecutionFailed
        | ErrorCode::PlannerFailed => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// How much a status outranks another when a failed run has several blocking errors:
/// a refusal first, then a timeout, an unavailable dependency, a bad plan, the rest.
pub(crate) fn rank(status: StatusCode) -> u8 {
    match status {
        StatusCode::FORBIDDEN => 5,
        StatusCode::GATEWAY_TIMEOUT => 4,
        StatusCode::SERVICE_UNAVAILABLE => 3,
        StatusCode::BAD_REQUEST => 2,
        _ => 1,
    }
}

/// A JSON body whose rejection is an [`ApiError`]: 413 above the body limit, 400 otherwise
/// (malformed JSON, a wrong or unknown field, a missing content type).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "PAYLOAD_TOO_LARGE",
                    "The request body is too large.",
                ))
            }
            Err(rejection) => Err(ApiError::bad_request(rejection.body_text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_codes_map_to_the_spec_statuses() {
        assert_eq!(
            status_of(ErrorCode::SecurityViolation),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status_of(ErrorCode::PipelineTimeout),
            StatusCode::GATEWAY_TIMEOUT
        );
        assert_eq!(
            status_of(ErrorCode::ServiceUnavailable),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(
            status_of(ErrorCode::PlanningFailure),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of(ErrorCode::ColumnNotFound),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of(ErrorCode::ExecutorCrash),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        // A refusal outranks a timeout, which outranks a bad plan.
        assert!(rank(StatusCode::FORBIDDEN) > rank(StatusCode::GATEWAY_TIMEOUT));
        assert!(rank(StatusCode::GATEWAY_TIMEOUT) > rank(StatusCode::BAD_REQUEST));
        assert!(rank(StatusCode::BAD_REQUEST) > rank(StatusCode::INTERNAL_SERVER_ERROR));
    }
}
