//! The safe DLPack layer and the raw layer: import (the malformed-tensor table, ownership),
//! typed access, export, the legacy/versioned adapters, and the raw types' behaviour.

#[path = "../fixture/mod.rs"]
mod fixture;

mod access;
#[cfg(feature = "alloc")]
mod adapt;
#[cfg(feature = "alloc")]
mod export;
mod import;
mod raw;
