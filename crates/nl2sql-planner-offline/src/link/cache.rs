//! Built schema indexes, kept per snapshot. Building one (the words, stems and samples of
//! every table and column) was half of a question's planning time, and a planner plans
//! many questions over the same few snapshots. An index is reused only for a snapshot
//! equal to the one it was built from, so a changed schema is never read through a stale
//! index.

use std::sync::{Arc, Mutex, PoisonError};

use nl2sql_state::SchemaSnapshot;

use super::schema::SchemaIndex;

/// How many snapshots' indexes are kept (the least recently used is dropped).
const CAPACITY: usize = 16;

/// The indexes of the snapshots planned over most recently.
#[derive(Debug, Default)]
pub(crate) struct IndexCache {
    /// Each snapshot with its index, the most recently used last.
    entries: Mutex<Vec<(SchemaSnapshot, Arc<SchemaIndex>)>>,
}

impl IndexCache {
    /// The index of `snapshot`: kept from an earlier call with an equal snapshot, else
    /// built (outside the lock) and kept.
    pub(crate) fn index(&self, snapshot: &SchemaSnapshot) -> Arc<SchemaIndex> {
        {
            let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(i) = entries.iter().position(|(s, _)| s == snapshot) {
                let entry = entries.remove(i);
                let index = Arc::clone(&entry.1);
                entries.push(entry);
                return index;
            }
        }
        let index = Arc::new(SchemaIndex::build(snapshot));
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if !entries.iter().any(|(s, _)| s == snapshot) {
            if entries.len() >= CAPACITY {
                entries.remove(0);
            }
            entries.push((snapshot.clone(), Arc::clone(&index)));
        }
        index
    }

    /// How many snapshots' indexes are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}
