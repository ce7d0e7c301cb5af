//! Arrow ↔ parquet bytes: zstd compression, column statistics on (the writer default).

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::ChunkReader;

use crate::ArtifactTable;

/// The parquet bytes of `batches`; zero batches give a valid file with the schema only.
pub(crate) fn encode(schema: SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, ParquetError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, schema, Some(props))?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.close()?;
    Ok(buf)
}

/// Every batch of the parquet object `data` (the verified bytes, so what is decoded is what
/// was hashed).
pub(crate) fn decode(data: impl ChunkReader + 'static) -> Result<ArtifactTable, ParquetError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)?;
    let schema = builder.schema().clone();
    let batches = builder
        .build()?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ParquetError::General(e.to_string()))?;
    Ok(ArtifactTable { schema, batches })
}
