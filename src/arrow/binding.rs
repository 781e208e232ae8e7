//! What an array's buffers were sized for. Buffers carry no lengths in the C Data Interface:
//! their sizes follow from the type the producer meant, so an array may only be read with that
//! type. Each array remembers the schema it was validated against (a process-unique id, and the
//! node) or, for arrays this crate built, the exact layout; views with any other schema are
//! [`ValidationError::SchemaMismatch`].

use core::sync::atomic::{AtomicUsize, Ordering};

use super::{SchemaRef, ValidationError};
use crate::raw::ArrowSchema;

/// The last schema id handed out; 0 is never a valid id.
static LAST_ID: AtomicUsize = AtomicUsize::new(0);

/// A fresh, never reused schema id; 0 (which nothing matches) once the ids are exhausted.
pub(crate) fn next_schema_id() -> usize {
    let mut last = LAST_ID.load(Ordering::Relaxed);
    loop {
        let Some(next) = last.checked_add(1) else {
            return 0;
        };
        match LAST_ID.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(actual) => last = actual,
        }
    }
}

/// The schema (or layout) an array's buffers were sized for.
pub(crate) enum Binding {
    /// Validated against node `node` of the schema with id `id` (`node` is NULL for the root,
    /// which moves with its `Schema`; other nodes stay where their producer put them).
    Schema { id: usize, node: *const ArrowSchema },
    /// Built by this crate with exactly this layout.
    #[cfg(feature = "alloc")]
    Layout(alloc::boxed::Box<super::SchemaDef>),
    /// Built by `Array::from_parts`, whose caller vouches for every schema it is used with.
    #[cfg(feature = "alloc")]
    Vouched,
}

impl Binding {
    /// The binding of an array validated against `schema`.
    pub(crate) fn of(schema: SchemaRef<'_>) -> Self {
        let (id, node) = schema.identity();
        Self::Schema { id, node }
    }

    /// Refuses a schema the buffers were not sized for.
    pub(crate) fn check(&self, schema: SchemaRef<'_>) -> Result<(), ValidationError> {
        let fits = match self {
            Self::Schema { id, node } => *id != 0 && schema.identity() == (*id, *node),
            #[cfg(feature = "alloc")]
            Self::Layout(def) => def.same_layout(schema),
            #[cfg(feature = "alloc")]
            Self::Vouched => true,
        };
        fits.then_some(()).ok_or(ValidationError::SchemaMismatch)
    }
}
