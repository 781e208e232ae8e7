//! The fast paths' property, for the fuzz targets (`cargo fuzz` builds with `--cfg fuzzing`);
//! not part of the API.

use super::*;

/// Panics unless validation with its fast path returns exactly what full validation returns,
/// and, for a tensor with compact row-major (or NULL) strides that validation accepts, unless
/// the export's `compact_meta` computes the same result from the shape alone.
///
/// # Safety
/// As for `validate`: `shape` and `strides` (when non-NULL) point to `ndim` readable values
/// when `0 < ndim <= MAX_NDIM`.
pub unsafe fn check_fast_paths(t: &DLTensor, version: Option<DLPackVersion>, flags: DLPackFlags) {
    // SAFETY: forwarded from the caller.
    let fast = unsafe { validate(t, version, flags) };
    // SAFETY: forwarded from the caller.
    let full = unsafe { validate_full(t, version, flags) };
    assert_eq!(fast, full, "the fast path disagrees with full validation");
    // SAFETY: forwarded from the caller.
    if let Some(accepted) = unsafe { accept_compact(t, version, flags) } {
        assert_eq!(
            Ok(accepted),
            full,
            "accept_compact disagrees with full validation"
        );
    }
    // The typed imports' rule (`HostSlice`), for two element types.
    for accepted in [
        // SAFETY: forwarded from the caller.
        unsafe { accept_compact_with(t, version, flags, element_rule::<f32>, true) },
        // SAFETY: forwarded from the caller.
        unsafe { accept_compact_with(t, version, flags, element_rule::<u8>, true) },
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(
            Ok(accepted),
            full,
            "the typed rule disagrees with full validation"
        );
    }
    #[cfg(feature = "alloc")]
    if let (Ok(n), Ok(storage)) = (usize::try_from(t.ndim), Storage::of(t.dtype, flags)) {
        if n <= MAX_NDIM && (n == 0 || !t.shape.is_null()) {
            // SAFETY: `shape` points to `n` values (caller).
            let shape = unsafe { i64_array(t.shape, n) };
            export_fast_path_agrees(shape, storage, t.device, flags);
        }
    }
    #[cfg(feature = "alloc")]
    if let Ok(meta) = fast {
        // SAFETY: validated: `shape` (and `strides`) hold `ndim` values.
        let shape = unsafe { i64_array(t.shape, ndim(t)) };
        let compact = t.strides.is_null() || {
            // SAFETY: as above.
            let strides = unsafe { i64_array(t.strides, ndim(t)) };
            (0..shape.len()).all(|dim| strides[dim] == row_major_stride(shape, dim))
        };
        if compact {
            let exported = compact_meta(shape, meta.storage(), t.device, flags, |_, _, _| {});
            assert_eq!(exported, Ok(meta), "the export's fast path disagrees");
        }
    }
}

/// Panics unless `view`'s typed slices are the same from their fast path as from the general
/// one, for `u8`, `i16`, `f32`, `u64` and `i128` (nothing is read).
pub fn check_slice_paths(view: &crate::dlpack::TensorView<'_>) {
    view.slice_paths_agree::<u8>();
    view.slice_paths_agree::<i16>();
    view.slice_paths_agree::<f32>();
    view.slice_paths_agree::<u64>();
    view.slice_paths_agree::<i128>();
}
