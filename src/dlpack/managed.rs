//! Owning wrappers for managed tensors received from another library.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;

use super::validate::{self, Meta};
use super::{AccessError, Element, ExportError, ImportError, TensorView, TensorViewMut};
use crate::raw::{DLManagedTensor, DLManagedTensorVersioned, DLPackFlags, DLPackVersion, DLTensor};

/// A pointer to field `$field` (of type `$fty`) of the `$ty` behind the `NonNull` `$ptr`,
/// computed without dereferencing anything (`offset_of!`), with the struct's provenance.
macro_rules! field {
    ($ptr:expr, $ty:ty, $field:ident: $fty:ty) => {
        $ptr.as_ptr()
            .cast::<u8>()
            .wrapping_add(core::mem::offset_of!($ty, $field))
            .cast::<$fty>()
    };
}

pub(super) mod sealed {
    use super::*;

    /// What the wrapper needs from a managed struct. Every function reads through raw pointers
    /// only what the DLPack rules allow it to read.
    pub trait Raw {
        /// Reads the version (`None` for the legacy struct, which has none).
        ///
        /// # Safety
        /// `ptr` points to a live managed struct whose prefix may be read.
        unsafe fn version(ptr: NonNull<Self>) -> Option<DLPackVersion>;

        /// Reads the flags (empty for the legacy struct).
        ///
        /// # Safety
        /// As for `version`, and the version's major is 1 (or the struct is legacy).
        unsafe fn flags(ptr: NonNull<Self>) -> DLPackFlags;

        /// Reads the deleter.
        ///
        /// # Safety
        /// As for `version`.
        unsafe fn deleter(ptr: NonNull<Self>) -> Option<unsafe extern "C" fn(*mut Self)>;

        /// The embedded `DLTensor`.
        ///
        /// # Safety
        /// As for `flags`, and the struct is not written while the reference lives.
        unsafe fn dl_tensor<'a>(ptr: NonNull<Self>) -> &'a DLTensor;

        /// Refuses the flags this struct cannot carry (what would be lost, not merely dropped
        /// information: `IS_COPIED` only ever grants less when lost).
        fn representable(flags: DLPackFlags) -> Result<(), ExportError>;

        /// A header of this kind for an export (version 1.3 where there is a version).
        fn header(
            dl_tensor: DLTensor,
            manager_ctx: *mut c_void,
            deleter: unsafe extern "C" fn(*mut Self),
            flags: DLPackFlags,
        ) -> Self
        where
            Self: Sized;
    }

    impl Raw for DLManagedTensorVersioned {
        unsafe fn version(ptr: NonNull<Self>) -> Option<DLPackVersion> {
            // SAFETY: `version` is in the permanent prefix, readable under any major (caller).
            Some(unsafe { field!(ptr, Self, version: DLPackVersion).read() })
        }
        unsafe fn flags(ptr: NonNull<Self>) -> DLPackFlags {
            // SAFETY: `flags` is in the permanent prefix (caller guarantees a live struct).
            DLPackFlags::from_bits_retain(unsafe { field!(ptr, Self, flags: u64).read() })
        }
        unsafe fn deleter(ptr: NonNull<Self>) -> Option<unsafe extern "C" fn(*mut Self)> {
            // SAFETY: `deleter` is in the permanent prefix, readable under any major (caller).
            unsafe { field!(ptr, Self, deleter: Option<unsafe extern "C" fn(*mut Self)>).read() }
        }
        unsafe fn dl_tensor<'a>(ptr: NonNull<Self>) -> &'a DLTensor {
            // SAFETY: major 1 means this layout; the caller guarantees a live, unwritten struct.
            unsafe { &*field!(ptr, Self, dl_tensor: DLTensor) }
        }
        fn representable(_: DLPackFlags) -> Result<(), ExportError> {
            Ok(())
        }
        fn header(
            dl_tensor: DLTensor,
            manager_ctx: *mut c_void,
            deleter: unsafe extern "C" fn(*mut Self),
            flags: DLPackFlags,
        ) -> Self {
            Self {
                version: DLPackVersion::CURRENT,
                manager_ctx,
                deleter: Some(deleter),
                flags: flags.bits(),
                dl_tensor,
            }
        }
    }

    impl Raw for DLManagedTensor {
        unsafe fn version(_: NonNull<Self>) -> Option<DLPackVersion> {
            None
        }
        unsafe fn flags(_: NonNull<Self>) -> DLPackFlags {
            DLPackFlags::empty()
        }
        unsafe fn deleter(ptr: NonNull<Self>) -> Option<unsafe extern "C" fn(*mut Self)> {
            // SAFETY: the caller guarantees a live struct.
            unsafe { field!(ptr, Self, deleter: Option<unsafe extern "C" fn(*mut Self)>).read() }
        }
        unsafe fn dl_tensor<'a>(ptr: NonNull<Self>) -> &'a DLTensor {
            // SAFETY: the caller guarantees a live struct that is not written meanwhile.
            unsafe { &*field!(ptr, Self, dl_tensor: DLTensor) }
        }
        fn representable(flags: DLPackFlags) -> Result<(), ExportError> {
            let lost = flags.difference(DLPackFlags::IS_COPIED);
            if lost.is_empty() {
                Ok(())
            } else {
                Err(ExportError::FlagsNotRepresentable { flags: lost })
            }
        }
        fn header(
            dl_tensor: DLTensor,
            manager_ctx: *mut c_void,
            deleter: unsafe extern "C" fn(*mut Self),
            _: DLPackFlags,
        ) -> Self {
            Self {
                dl_tensor,
                manager_ctx,
                deleter: Some(deleter),
            }
        }
    }
}

/// Refuses the flags a legacy `DLManagedTensor` (or a bare `DLTensor`, which has none either)
/// cannot carry: everything but `IS_COPIED`, whose loss only grants less. The rule
/// [`VersionedTensor::into_legacy`] and [`BorrowedTensor`](super::BorrowedTensor) apply, for a
/// producer that hands out flagless structs of its own.
///
/// # Errors
/// [`ExportError::FlagsNotRepresentable`] with the flags that would be lost.
///
/// ```
/// use dlpack_abi::dlpack::{flagless_representable, ExportError};
/// use dlpack_abi::raw::DLPackFlags;
///
/// assert_eq!(flagless_representable(DLPackFlags::IS_COPIED), Ok(()));
/// assert_eq!(
///     flagless_representable(DLPackFlags::READ_ONLY),
///     Err(ExportError::FlagsNotRepresentable { flags: DLPackFlags::READ_ONLY })
/// );
/// ```
pub fn flagless_representable(flags: DLPackFlags) -> Result<(), ExportError> {
    <DLManagedTensor as sealed::Raw>::representable(flags)
}

/// The two managed structs a foreign producer can hand over: [`DLManagedTensorVersioned`] and
/// the legacy [`DLManagedTensor`]. Sealed.
///
/// ```
/// use dlpack_abi::dlpack::ManagedStruct;
/// use dlpack_abi::raw::DLManagedTensorVersioned;
///
/// fn takes_either<M: ManagedStruct>() {}
/// takes_either::<DLManagedTensorVersioned>();
/// ```
pub trait ManagedStruct: sealed::Raw {}
impl ManagedStruct for DLManagedTensorVersioned {}
impl ManagedStruct for DLManagedTensor {}

/// A foreign tensor, owned: validated at import, its deleter called exactly once on drop.
///
/// Use the aliases [`VersionedTensor`] (DLPack 1.x, `"dltensor_versioned"` capsules) and
/// [`LegacyTensor`] (`"dltensor"` capsules). A NULL deleter is legal and means there is nothing
/// to call.
///
/// The wrapper is `Send` and `Sync`: the DLPack spec lets the deleter run on any thread (so
/// producers must make it thread-safe), and shared access only reads the struct and the data.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::{Export, VersionedTensor};
///
/// // A producer (here this crate; in practice C, NumPy, PyTorch, ...) hands over a
/// // `DLManagedTensorVersioned*`: a 2 x 3 f32 tensor holding 0, 1, ..., 5.
/// let raw = Export::new(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).finish()?.into_raw();
/// // SAFETY: `raw` is live and its ownership passes here (`from_raw`'s contract).
/// let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
/// let view = tensor.view();
/// assert_eq!(view.shape(), [2, 3]);
/// assert_eq!(view.as_slice::<f32>()?, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
/// drop(tensor); // the producer's deleter runs here, once
/// # }
/// # Ok(()) }
/// ```
pub struct ManagedTensor<M: ManagedStruct> {
    owner: Owner<M>,
    meta: Meta,
}

/// An owned [`DLManagedTensorVersioned`]. See [`ManagedTensor`].
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[4]).finish()?;
/// assert_eq!(tensor.view().version(), Some(dlpack_abi::raw::DLPackVersion::CURRENT));
/// # }
/// # Ok(()) }
/// ```
pub type VersionedTensor = ManagedTensor<DLManagedTensorVersioned>;

/// An owned legacy [`DLManagedTensor`]: no version and no flags, so mutable access is `unsafe`.
/// See [`ManagedTensor`].
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[4]).finish_legacy()?;
/// assert_eq!(tensor.view().version(), None);
/// # }
/// # Ok(()) }
/// ```
pub type LegacyTensor = ManagedTensor<DLManagedTensor>;

/// A managed struct that passed [`ManagedTensor::validate`] but is not owned yet: take it with
/// [`take`](Self::take) once ownership has passed, or drop it (nothing is called: the struct
/// is still its holder's). Holds no borrow; the struct must stay as it was until then.
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use core::ptr::NonNull;
/// use dlpack_abi::dlpack::{Export, VersionedTensor};
///
/// let raw = NonNull::new(Export::new(vec![1u8, 2], &[2]).finish()?.into_raw()).unwrap();
/// // SAFETY: `raw` is live and unwritten; ownership stays here until `take`.
/// let checked = unsafe { VersionedTensor::validate(raw) }?;
/// // SAFETY: ownership passes now.
/// assert_eq!(unsafe { checked.take() }.view().shape(), [2]);
/// # }
/// # Ok(()) }
/// ```
pub struct Validated<M: ManagedStruct> {
    ptr: NonNull<M>,
    meta: Meta,
}

impl<M: ManagedStruct> Validated<M> {
    /// Takes ownership of the validated struct, without validating it again.
    ///
    /// # Safety
    /// Ownership has passed to the caller (by the protocol that handed the struct over), as for
    /// [`ManagedTensor::from_raw`], and nothing has written the struct, its `shape` or its
    /// `strides` since [`ManagedTensor::validate`].
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use core::ptr::NonNull;
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    ///
    /// let raw = NonNull::new(Export::new(vec![3u8], &[1]).finish()?.into_raw()).unwrap();
    /// // SAFETY: as `validate` and `take` require.
    /// let tensor = unsafe { VersionedTensor::validate(raw)?.take() };
    /// assert_eq!(tensor.view().as_slice::<u8>()?, [3]);
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub unsafe fn take(self) -> ManagedTensor<M> {
        // SAFETY: owned now (caller), and `meta` is the validation of the unchanged struct.
        unsafe { ManagedTensor::from_validated(self.ptr, self.meta) }
    }

    /// The struct's address.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use core::ptr::NonNull;
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    ///
    /// let raw = NonNull::new(Export::new(vec![3u8], &[1]).finish()?.into_raw()).unwrap();
    /// // SAFETY: live and unwritten.
    /// let checked = unsafe { VersionedTensor::validate(raw) }?;
    /// assert_eq!(checked.as_ptr(), raw);
    /// // SAFETY: ownership passes now.
    /// let tensor = unsafe { checked.take() };
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn as_ptr(&self) -> NonNull<M> {
        self.ptr
    }
}

impl<M: ManagedStruct> fmt::Debug for Validated<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validated")
            .field("ptr", &self.ptr)
            .finish_non_exhaustive()
    }
}

/// Calls the deleter when dropped. Owns the struct from the first moment of import, so every
/// early return calls the deleter exactly once.
struct Owner<M: ManagedStruct> {
    ptr: NonNull<M>,
    _owns: PhantomData<M>,
}

/// Refuses a version whose layout this crate does not know (major other than 1); a legacy
/// struct (`None`) has the one layout there is.
#[inline(always)]
fn supported(version: Option<DLPackVersion>) -> Result<(), ImportError> {
    match version {
        Some(found) if found.major != crate::raw::DLPACK_MAJOR_VERSION => {
            Err(ImportError::UnsupportedVersion { found })
        }
        _ => Ok(()),
    }
}

impl<M: ManagedStruct> Drop for Owner<M> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: the struct is live until its deleter runs, which is only here: `Owner` is
        // created once per imported pointer (`from_raw`'s contract makes it the only owner) and
        // `into_raw` forgets it, so this is the one call.
        unsafe { call_deleter(self.ptr) }
    }
}

/// Calls the deleter of a managed struct (a NULL deleter means there is nothing to call): the
/// one place a consumer's deleter call is made. For a holder that never imports the struct,
/// such as a Python capsule's destructor freeing a tensor no consumer took.
///
/// # Safety
/// `ptr` is a live managed struct whose deleter has not run and is the caller's to call, once.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use core::ptr::NonNull;
/// use dlpack_abi::dlpack::{call_deleter, Export};
///
/// let raw = Export::new(vec![1.0f32, 2.0], &[2]).finish().unwrap().into_raw();
/// // SAFETY: `raw` is live, its deleter has not run, and it is ours to call once.
/// unsafe { call_deleter(NonNull::new(raw).unwrap()) };
/// # }
/// ```
#[inline(always)]
pub unsafe fn call_deleter<M: ManagedStruct>(ptr: NonNull<M>) {
    // SAFETY: `deleter` is in the permanent prefix of a live struct (caller).
    if let Some(deleter) = unsafe { M::deleter(ptr) } {
        // SAFETY: the DLPack contract: the consumer calls the deleter with the struct itself,
        // exactly once (caller).
        unsafe { deleter(ptr.as_ptr()) }
    }
}

/// A tracked tensor is reported to the release hook before its deleter runs (the owner's drop,
/// after this one).
impl<M: ManagedStruct> Drop for ManagedTensor<M> {
    #[inline(always)]
    fn drop(&mut self) {
        self.untrack();
    }
}

// SAFETY: `Send`: the DLPack spec (dlpack.h; python_spec "the deleter can be called from any
// thread") requires producers to accept the deleter call on any thread, and the data is plain
// memory handed over for the consumer's use. `Sync`: `&ManagedTensor` only reads the struct and
// the data (`Element: Pod` values are `Sync`); writes need `&mut`.
unsafe impl<M: ManagedStruct> Send for ManagedTensor<M> {}
// SAFETY: see `Send` above.
unsafe impl<M: ManagedStruct> Sync for ManagedTensor<M> {}

impl<M: ManagedStruct> ManagedTensor<M> {
    /// Takes ownership of a managed tensor from a foreign producer and validates it.
    ///
    /// On every error the deleter has already run (exactly once) when this returns, except for
    /// [`ImportError::NullTensor`], where there is nothing to delete. For a versioned tensor whose
    /// `version.major` is not 1, nothing but `version` and `deleter` is read.
    ///
    /// # Safety
    /// - `ptr` is NULL, or points to a live managed struct that the caller owns and hands over:
    ///   nobody else calls its deleter, and nobody writes the struct, its `shape` or its
    ///   `strides` until the deleter runs.
    /// - If `version.major` is 1 (always for the legacy struct), `dl_tensor` follows the DLPack
    ///   rules for what it points to: `shape` to `ndim` readable `i64`s when `ndim > 0`, `strides`
    ///   likewise when non-NULL. Validation checks everything that can be checked without
    ///   dereferencing (ndim, extents, overflow, NULLs, the reach), and reads only
    ///   `ndim <= MAX_NDIM` values.
    /// - For typed access ([`TensorView::as_slice`] and friends) on a host-accessible device, the
    ///   bytes reachable from `data + byte_offset` through the shape and strides are readable for
    ///   the wrapper's lifetime and not written by anyone while they are borrowed. A tensor marked
    ///   `IS_COPIED` (and not `READ_ONLY`) is the consumer's alone, as the spec says: nobody else
    ///   reads or writes it, which is what lets [`VersionedTensor::as_mut_slice`] be safe.
    ///
    /// # Errors
    /// [`ImportError`] for a tensor that breaks a rule of the table in the
    /// [module docs](crate::dlpack); the deleter has run then (except for a NULL pointer).
    ///
    /// ```
    /// # fn main() {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, ImportError, VersionedTensor};
    ///
    /// // A producer that sets `ndim = -1`: refused, and its deleter has run.
    /// let bad = Export::new(vec![0.0f32, 1.0], &[2]).finish().unwrap().into_raw();
    /// unsafe { (*bad).dl_tensor.ndim = -1 };
    /// let error = unsafe { VersionedTensor::from_raw(bad) }.unwrap_err();
    /// assert_eq!(error, ImportError::NegativeNdim { ndim: -1 });
    /// # }
    /// # }
    /// ```
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut M) -> Result<Self, ImportError> {
        let ptr = NonNull::new(ptr).ok_or(ImportError::NullTensor)?;
        let owner = Owner {
            ptr,
            _owns: PhantomData,
        };
        // SAFETY: the caller's contract is `check`'s. On error `owner` is dropped: the deleter
        // runs, after nothing but `version` was read for an unknown major.
        let meta = unsafe { Self::check(ptr) }?;
        Ok(Self { owner, meta })
    }

    /// Validates a struct by the rules of [`from_raw`](Self::from_raw) without taking
    /// ownership: on failure nothing is called and the caller still owns the struct. For
    /// protocols where ownership passes only after the consumer accepts, such as a Python
    /// capsule that is renamed only once its tensor is known to be good.
    ///
    /// # Safety
    /// As for [`from_raw`](Self::from_raw), except that ownership stays with the caller until
    /// [`Validated::take`].
    ///
    /// # Errors
    /// [`ImportError`] for a tensor that breaks a rule of the table in the
    /// [module docs](crate::dlpack); the deleter has **not** run.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use core::ptr::NonNull;
    /// use dlpack_abi::dlpack::{call_deleter, Export, VersionedTensor};
    ///
    /// let raw = NonNull::new(Export::new(vec![1i32, 2, 3], &[3]).finish()?.into_raw()).unwrap();
    /// // SAFETY: `raw` is live; its ownership stays here until `take`.
    /// let checked = unsafe { VersionedTensor::validate(raw) }?;
    /// // ... the protocol's hand-over (renaming a capsule, say) succeeds, then:
    /// // SAFETY: ownership has passed to us, and nothing wrote the struct since.
    /// let tensor = unsafe { checked.take() };
    /// assert_eq!(tensor.view().as_slice::<i32>()?, [1, 2, 3]);
    ///
    /// let bad = Export::new(vec![1i32], &[1]).finish()?.into_raw();
    /// unsafe { (*bad).dl_tensor.ndim = -1 };
    /// let bad = NonNull::new(bad).unwrap();
    /// assert!(unsafe { VersionedTensor::validate(bad) }.is_err()); // still ours: free it
    /// unsafe { call_deleter(bad) };
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub unsafe fn validate(ptr: NonNull<M>) -> Result<Validated<M>, ImportError> {
        // SAFETY: the caller's contract.
        let meta = unsafe { Self::check(ptr) }?;
        Ok(Validated { ptr, meta })
    }

    /// Validates a struct without taking ownership (see [`validate`](Self::validate)).
    ///
    /// # Safety
    /// As for [`from_raw`](Self::from_raw), except that ownership stays with the caller.
    #[inline(always)]
    pub(crate) unsafe fn check(ptr: NonNull<M>) -> Result<Meta, ImportError> {
        #[cfg(feature = "fast-path")]
        // SAFETY: the caller's contract.
        if let Some((tensor, version, flags)) = unsafe { Self::known_layout(ptr) } {
            // SAFETY: `shape` and `strides` follow the rules validation needs (caller).
            if let Some(meta) = unsafe { validate::accept_compact(tensor, version, flags) } {
                return Ok(meta);
            }
        }
        // SAFETY: the caller's contract.
        unsafe { Self::check_in_full(ptr) }
    }

    /// A fast path's way into a struct: its tensor, version and flags where the version's layout
    /// is known (major 1, or legacy); `None` for another major.
    ///
    /// # Safety
    /// As for [`check`](Self::check); the tensor is borrowed for as long as the caller owns the
    /// struct.
    #[cfg(feature = "fast-path")]
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub(crate) unsafe fn known_layout<'a>(
        ptr: NonNull<M>,
    ) -> Option<(&'a DLTensor, Option<DLPackVersion>, DLPackFlags)> {
        // SAFETY: the caller hands over a live struct; `version` is in the permanent prefix.
        let version = unsafe { M::version(ptr) };
        supported(version).ok()?;
        // SAFETY: major 1 (or legacy): the whole struct has the layout we know and, by the
        // caller's contract, stays unwritten while we own it.
        let tensor = unsafe { M::dl_tensor(ptr) };
        // SAFETY: as above.
        let flags = unsafe { M::flags(ptr) };
        Some((tensor, version, flags))
    }

    /// All of [`check`](Self::check), without its fast path: out of line where there is a fast
    /// path, and given only the pointer, so that the fast path keeps nothing in memory for it.
    ///
    /// # Safety
    /// As for [`check`](Self::check).
    #[cfg_attr(feature = "fast-path", cold, inline(never))]
    #[cfg_attr(not(feature = "fast-path"), inline(always))]
    unsafe fn check_in_full(ptr: NonNull<M>) -> Result<Meta, ImportError> {
        // SAFETY: the caller hands over a live struct; `version` is in the permanent prefix.
        let version = unsafe { M::version(ptr) };
        supported(version)?;
        // SAFETY: major 1 (or legacy): the whole struct has the layout we know and, by the
        // caller's contract, stays unwritten while we own it.
        let tensor = unsafe { M::dl_tensor(ptr) };
        // SAFETY: as above.
        let flags = unsafe { M::flags(ptr) };
        // SAFETY: `shape` and `strides` follow the rules `validate` needs (caller).
        unsafe { validate::validate_general(tensor, version, flags) }
    }

    /// Wraps a struct this crate built and whose description it already validated.
    ///
    /// # Safety
    /// As for [`from_raw`](Self::from_raw), and `meta` is what validating `ptr` would return,
    /// except for its exclusive bit, which the caller vouches for (an export of a buffer it
    /// holds alone).
    #[inline(always)]
    pub(crate) unsafe fn from_validated(ptr: NonNull<M>, meta: Meta) -> Self {
        Self {
            owner: Owner {
                ptr,
                _owns: PhantomData,
            },
            meta,
        }
    }

    /// What validation learnt about the tensor.
    #[inline(always)]
    pub(crate) fn meta(&self) -> Meta {
        self.meta
    }

    /// The token a borrow registry knows this tensor by, and that its
    /// [`ReleaseHook`](super::ReleaseHook) receives: the managed struct's address, unique
    /// among live tensors.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![1u8, 2], &[2]).finish()?;
    /// assert_eq!(tensor.token(), tensor.as_raw() as *const _ as usize);
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn token(&self) -> usize {
        self.owner.ptr.as_ptr() as usize
    }

    /// Marks the tensor as registered with a borrow registry: `hook.released(self.token())`
    /// runs once when the tensor stops being held (dropped, before the deleter, or given away
    /// by [`into_raw`](Self::into_raw)). The first call in the process installs `hook` (see
    /// [`ReleaseHook`](super::ReleaseHook)); tracking an already tracked tensor again is a no-op.
    ///
    /// # Errors
    /// [`HookInstalled`](super::HookInstalled) when another hook is installed; the tensor is
    /// left untracked.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn core::error::Error>> {
    /// # #[cfg(feature = "alloc")] {
    /// use core::sync::atomic::{AtomicUsize, Ordering};
    /// use dlpack_abi::dlpack::{Export, ReleaseHook};
    ///
    /// static LAST: AtomicUsize = AtomicUsize::new(0);
    /// static HOOK: ReleaseHook = ReleaseHook { released: |token| LAST.store(token, Ordering::SeqCst) };
    ///
    /// let mut tensor = Export::new(vec![1.0f32, 2.0], &[2]).finish()?;
    /// tensor.track(&HOOK)?;
    /// assert!(tensor.is_tracked());
    /// let token = tensor.token();
    /// drop(tensor);
    /// assert_eq!(LAST.load(Ordering::SeqCst), token);
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn track(&mut self, hook: &'static super::ReleaseHook) -> Result<(), super::HookInstalled> {
        super::tracking::install(hook)?;
        self.meta = self.meta.with_tracked(true);
        Ok(())
    }

    /// Whether the tensor is tracked by a borrow registry (see [`track`](Self::track)).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// assert!(!Export::new(vec![1u8], &[1]).finish()?.is_tracked());
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn is_tracked(&self) -> bool {
        self.meta.is_tracked()
    }

    /// Reports a tracked tensor to the release hook (once: the mark is cleared).
    #[inline]
    fn untrack(&mut self) {
        if self.meta.is_tracked() {
            self.meta = self.meta.with_tracked(false);
            super::tracking::released(self.token());
        }
    }

    /// Sets whether this consumer holds the memory alone (see `Meta::with_exclusive`).
    #[cfg(feature = "alloc")]
    pub(crate) fn set_exclusive(&mut self, exclusive: bool) {
        self.meta = self.meta.with_exclusive(exclusive);
    }

    /// Gives ownership back without calling the deleter; the caller must eventually call it (or
    /// re-import with [`from_raw`](Self::from_raw)).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, VersionedTensor};
    ///
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?;
    /// let raw = tensor.into_raw(); // e.g. to hand to C
    /// let again = unsafe { VersionedTensor::from_raw(raw) }?;
    /// assert_eq!(again.view().element_count(), 3);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn into_raw(self) -> *mut M {
        let mut this = ManuallyDrop::new(self);
        this.untrack();
        this.owner.ptr.as_ptr()
    }

    /// The managed struct, for reading raw fields.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?;
    /// assert!(tensor.as_raw().deleter.is_some());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn as_raw(&self) -> &M {
        // SAFETY: validated at import: major 1 or legacy, so the whole struct has the known
        // layout, and it is live and unwritten until we call the deleter (`from_raw`'s contract).
        unsafe { self.owner.ptr.as_ref() }
    }

    /// A borrowed view: shape, strides, dtype, device, flags, contiguity and typed reads.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).finish()?;
    /// assert!(tensor.view().is_c_contiguous());
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline(always)]
    pub fn view(&self) -> TensorView<'_> {
        let ptr = self.owner.ptr;
        // SAFETY: as in `as_raw`.
        let tensor = unsafe { M::dl_tensor(ptr) };
        // SAFETY: as in `as_raw`.
        let version = unsafe { M::version(ptr) };
        // SAFETY: as in `as_raw`.
        let flags = unsafe { M::flags(ptr) };
        TensorView::new(tensor, self.meta, version, flags)
    }

    /// The start of a mutable slice, after everything [`TensorView::as_slice`] checks.
    #[inline(always)]
    fn mut_start<T: Element>(&mut self) -> Result<*mut T, AccessError> {
        let view = self.view();
        view.check_contiguous(false)?;
        Ok(view.typed_ptr::<T>()?.cast_mut())
    }

    /// The elements as a mutable slice, in row-major order, without proof that this consumer
    /// holds the memory alone. Refuses `READ_ONLY` tensors and everything
    /// [`TensorView::as_slice`] refuses.
    ///
    /// # Safety
    /// The producer allows writes (a legacy tensor cannot say so; NumPy, for one, treats legacy
    /// capsules as read-only), and nothing else reads or writes the elements while the slice
    /// lives: not the producer, not another import of the same memory, not another thread.
    ///
    /// # Errors
    /// [`AccessError::ReadOnly`] for a `READ_ONLY` tensor, and what
    /// [`TensorView::as_slice`] refuses.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let mut tensor = Export::new(vec![0.0f32, 1.0], &[2]).finish_legacy()?;
    /// // SAFETY: this producer's buffers are writable, and nothing else holds them.
    /// unsafe { tensor.as_mut_slice_unchecked::<f32>() }?[1] = 5.0;
    /// assert_eq!(tensor.view().as_slice::<f32>()?, [0.0, 5.0]);
    /// # }
    /// # Ok(()) }
    /// ```
    pub unsafe fn as_mut_slice_unchecked<T: Element>(&mut self) -> Result<&mut [T], AccessError> {
        // SAFETY: writable and ours alone by the caller's promise (this function's contract is
        // `view_mut_unchecked`'s); the view then checks what `TensorView::as_slice` checks.
        unsafe { self.view_mut_unchecked() }?.into_mut_slice::<T>()
    }
}

impl VersionedTensor {
    /// The elements as a mutable slice, in row-major order, for a tensor this consumer holds
    /// alone: one marked `IS_COPIED` (the spec's "solely owned by the consumer") or an export of
    /// a uniquely owned Rust buffer ([`Export`](super::Export) of a `Vec`, `Box` or unique
    /// `Arc`). Any other tensor may share its memory with others (a producer may hand the same
    /// memory out twice), so it is [`AccessError::NotExclusive`]; `READ_ONLY` ones are
    /// [`AccessError::ReadOnly`]. Refuses everything [`TensorView::as_slice`] refuses too.
    ///
    /// # Errors
    /// [`AccessError::NotExclusive`] for a tensor this consumer may not hold alone,
    /// [`AccessError::ReadOnly`] for a `READ_ONLY` one, and what [`TensorView::as_slice`] refuses.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export, VersionedTensor};
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// // A producer's tensor marked IS_COPIED: the consumer's alone.
    /// let raw = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?.into_raw();
    /// unsafe { (*raw).flags = DLPackFlags::IS_COPIED.bits() };
    /// let mut tensor = unsafe { VersionedTensor::from_raw(raw) }?;
    /// tensor.as_mut_slice::<f32>()?[0] = 7.0;
    /// assert_eq!(tensor.view().as_slice::<f32>()?, [7.0, 1.0, 2.0]);
    ///
    /// // Without IS_COPIED the producer may have handed the same memory out twice.
    /// let raw = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).finish()?.into_raw();
    /// let mut shared = unsafe { VersionedTensor::from_raw(raw) }?;
    /// assert_eq!(shared.as_mut_slice::<f32>(), Err(AccessError::NotExclusive));
    ///
    /// let mut frozen = Export::new(vec![0.0f32, 1.0, 2.0], &[3]).read_only().finish()?;
    /// assert_eq!(frozen.as_mut_slice::<f32>(), Err(AccessError::ReadOnly));
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T], AccessError> {
        self.check_exclusive()?;
        let start = self.mut_start::<T>()?;
        // SAFETY: validated: host-accessible, row-major contiguous, dtype of `T`, aligned, and
        // `elements` elements reachable. Exclusive: `IS_COPIED` without `READ_ONLY` makes the
        // memory the consumer's alone (spec; `from_raw`'s contract), and an exclusive export
        // owns its buffer alone (`HostBuffer`'s contract); `&mut self` is the one borrow.
        Ok(unsafe { mut_slice(start, self.meta.elements()) })
    }
}

impl<M: ManagedStruct> ManagedTensor<M> {
    /// A mutable view for any layout, without proof that this consumer holds the memory alone:
    /// for a holder that has that proof elsewhere, such as a borrow registry's mutable borrow.
    /// Refuses `READ_ONLY` tensors.
    ///
    /// # Safety
    /// As for [`as_mut_slice_unchecked`](Self::as_mut_slice_unchecked): the producer allows
    /// writes, and nothing else reads or writes the elements while the view lives.
    ///
    /// # Errors
    /// [`AccessError::ReadOnly`] for a `READ_ONLY` tensor.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let mut tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).finish_legacy()?;
    /// // SAFETY: this producer's buffers are writable, and nothing else holds them.
    /// let mut view = unsafe { tensor.view_mut_unchecked() }?;
    /// view.set::<f32>(&[1, 0], 9.0)?;
    /// assert_eq!(tensor.view().get::<f32>(&[1, 0])?, 9.0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub unsafe fn view_mut_unchecked(&mut self) -> Result<TensorViewMut<'_>, AccessError> {
        if self.view().flags().contains(DLPackFlags::READ_ONLY) {
            return Err(AccessError::ReadOnly);
        }
        Ok(TensorViewMut::from_view(self.view()))
    }
}

impl VersionedTensor {
    /// A mutable view for any layout, for a tensor this consumer holds alone (as for
    /// [`as_mut_slice`](Self::as_mut_slice)): element writes through
    /// [`TensorViewMut`], strided ones included.
    ///
    /// # Errors
    /// [`AccessError::NotExclusive`] for a tensor this consumer may not hold alone,
    /// [`AccessError::ReadOnly`] for a `READ_ONLY` one.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // Column-major 2 x 2, exported from a `Vec`: ours alone.
    /// let mut tensor = Export::new(vec![0.0f32, 1.0, 2.0, 3.0], &[2, 2]).strides(&[1, 2]).finish()?;
    /// tensor.view_mut()?.set::<f32>(&[0, 1], 9.0)?;
    /// assert_eq!(tensor.view().get::<f32>(&[0, 1])?, 9.0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn view_mut(&mut self) -> Result<TensorViewMut<'_>, AccessError> {
        self.check_exclusive()?;
        Ok(TensorViewMut::from_view(self.view()))
    }

    /// `ReadOnly` or `NotExclusive` unless this consumer holds the memory alone.
    pub(super) fn check_exclusive(&self) -> Result<(), AccessError> {
        if self.meta.is_exclusive() {
            return Ok(());
        }
        Err(if self.view().flags().contains(DLPackFlags::READ_ONLY) {
            AccessError::ReadOnly
        } else {
            AccessError::NotExclusive
        })
    }

    /// The first element as a `*mut T`, for a tensor this consumer holds alone (as for
    /// [`as_mut_slice`](Self::as_mut_slice)), after the checks of [`TensorView::typed_ptr`]: for
    /// code that walks the strides itself and writes. Every element at an in-bounds index may
    /// be written while `self` is borrowed mutably.
    ///
    /// # Errors
    /// As [`as_mut_slice`](Self::as_mut_slice), except contiguity.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // Column-major 2 x 2, exported from a `Vec`: ours alone.
    /// let data = vec![0.0f32, 1.0, 2.0, 3.0];
    /// let mut tensor = Export::new(data, &[2, 2]).strides(&[1, 2]).finish()?;
    /// let start = tensor.typed_mut_ptr::<f32>()?;
    /// // SAFETY: index (0, 1) is in bounds, at offset 0 * 1 + 1 * 2.
    /// unsafe { *start.add(2) = 9.0 };
    /// assert_eq!(tensor.view().get::<f32>(&[0, 1])?, 9.0);
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn typed_mut_ptr<T: Element>(&mut self) -> Result<*mut T, AccessError> {
        self.check_exclusive()?;
        Ok(self.view().typed_ptr::<T>()?.cast_mut())
    }
}

/// `len` elements at `start`, or an empty slice.
///
/// # Safety
/// When `len > 0`: `start` is aligned and points to `len` initialised `T` exclusively ours for `'a`.
pub(super) unsafe fn mut_slice<'a, T>(start: *mut T, len: usize) -> &'a mut [T] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts_mut(start, len) }
}

impl<M: ManagedStruct> fmt::Debug for ManagedTensor<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedTensor")
            .field("view", &self.view())
            .finish()
    }
}
