//! `dlpack_abi.ArrowSchema`: an Arrow schema (a type, a field, or a table's struct of fields)
//! that any Arrow PyCapsule consumer reads through `__arrow_c_schema__`.

use alloc::string::String;

use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use super::arrow::schema_capsule;
use super::gil::Held;
use super::import_schema;
use dlpack_abi::arrow::{Schema, SchemaDef};

/// An Arrow schema (a type, a field, or the struct of a table's fields) that any Arrow
/// PyCapsule consumer reads: ``pyarrow.schema(x)``, ``pyarrow.field(x)``, polars, DuckDB.
///
/// ``__arrow_c_schema__`` may be called any number of times, each call a fresh copy.
/// ``ArrowSchema.from_arrow(obj)`` imports the schema of any object that offers it.
#[cfg_attr(
    not(doc),
    doc = r#"
Examples
--------
>>> import pyarrow as pa
>>> s = dlpack_abi.ArrowSchema.from_arrow(pa.schema([("x", pa.int64())]))
>>> pa.schema(s).names
['x']"#
)]
#[cfg_attr(
    doc,
    doc = r#"
**In Rust** ([`ArrowSchemaExport`], the type of `dlpack_abi.ArrowSchema`):

```no_run
use dlpack_abi::arrow::SchemaDef;
use dlpack_abi_pyo3::{ArrowSchemaExport, PyDlpackResult};
use pyo3::prelude::*;

#[pyfunction] // pyarrow.field(int64_field()) is pyarrow.field("n", pyarrow.int64())
fn int64_field() -> PyDlpackResult<ArrowSchemaExport> {
    Ok(ArrowSchemaExport::new(SchemaDef::new("l")?.with_name("n").export()?))
}
```"#
)]
// Immutable where the build allows it (the stable ABI only from 3.14), as our other classes.
#[cfg_attr(
    not(Py_LIMITED_API),
    pyclass(frozen, immutable_type, module = "dlpack_abi", name = "ArrowSchema")
)]
#[cfg_attr(
    Py_LIMITED_API,
    pyclass(frozen, module = "dlpack_abi", name = "ArrowSchema")
)]
pub struct ArrowSchemaExport {
    schema: Held<Schema>,
}

impl ArrowSchemaExport {
    /// Wraps a schema made in Rust.
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    /// use dlpack_abi_pyo3::ArrowSchemaExport;
    ///
    /// let export = ArrowSchemaExport::new(SchemaDef::new("g")?.export()?);
    /// assert_eq!(export.schema().view().format(), b"g");
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn new(schema: Schema) -> Self {
        Self {
            schema: Held::local(schema),
        }
    }

    /// The schema.
    ///
    /// ```
    /// use dlpack_abi::arrow::SchemaDef;
    /// use dlpack_abi_pyo3::ArrowSchemaExport;
    ///
    /// let export = ArrowSchemaExport::new(SchemaDef::new("u")?.with_name("s").export()?);
    /// assert_eq!(export.schema().view().name(), Some("s"));
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn schema(&self) -> &Schema {
        &self.schema
    }
}

#[pymethods]
impl ArrowSchemaExport {
    /// Import the schema of any object with ``__arrow_c_schema__`` (or an ``arrow_schema``
    /// capsule), validated.
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> dlpack_abi.ArrowSchema.from_arrow(pa.float32()).format
    /// 'f'
    #[staticmethod]
    fn from_arrow(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            schema: Held::imported(import_schema(source)?),
        })
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, SchemaDef::copy_of(self.schema.view()))
    }

    /// The Arrow format string of the root (``"+s"`` for a table's schema).
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> dlpack_abi.ArrowSchema.from_arrow(pa.schema([("x", pa.int8())])).format
    /// '+s'
    #[getter]
    fn format(&self) -> String {
        String::from_utf8_lossy(self.schema.view().format()).into_owned()
    }

    /// The root's name (``None`` when it has none).
    ///
    /// Examples
    /// --------
    /// >>> import pyarrow as pa
    /// >>> dlpack_abi.ArrowSchema.from_arrow(pa.field("x", pa.int8())).name
    /// 'x'
    #[getter]
    fn name(&self) -> Option<String> {
        self.schema.view().name().map(String::from)
    }
}
