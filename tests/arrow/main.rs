//! The safe Arrow layer: import and validation of schemas, arrays and streams (every `release`
//! counted), producers, and the DLPack <-> Arrow bridge.

#[path = "../fixture/mod.rs"]
mod fixture;

mod bridge;
mod import;
mod produce;
mod soundness;
mod sync;
