//! A bounded JSON reader for extension metadata: it checks the syntax of a whole text (RFC 8259,
//! nesting at most [`MAX_NESTING`] deep) and hands out the raw text of values, which the
//! extension parsers then interpret. No allocation, no recursion past the bound.

/// How deep arrays and objects may nest inside the top-level object.
pub(crate) const MAX_NESTING: usize = 16;

/// A syntax error: the byte offset where it was found and what was expected there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// Byte offset into the text.
    pub(crate) at: usize,
    /// What the grammar needed at `at` (e.g. `"':'"`, `"a value"`).
    pub(crate) expected: &'static str,
}

/// A cursor over JSON text.
pub(crate) struct Json<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Json<'a> {
    pub(crate) fn new(text: &'a [u8]) -> Self {
        Self { text, at: 0 }
    }

    fn error(&self, expected: &'static str) -> SyntaxError {
        SyntaxError {
            at: self.at,
            expected,
        }
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), SyntaxError> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// Only white space is left.
    pub(crate) fn end(&mut self) -> Result<(), SyntaxError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("the end of the text")),
        }
    }

    /// A string's raw bytes between the quotes (escapes checked, kept as written).
    pub(crate) fn string(&mut self) -> Result<&'a [u8], SyntaxError> {
        self.expect(b'"', "'\"'")?;
        let start = self.at;
        loop {
            match self.text.get(self.at) {
                None => return Err(self.error("'\"' (the string is not closed)")),
                Some(b'"') => break,
                Some(b'\\') => {
                    self.at += 1;
                    match self.text.get(self.at) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.text.get(self.at).is_some_and(u8::is_ascii_hexdigit) {
                                    return Err(self.error("4 hex digits after \\u"));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(self.error("an escape character after '\\'")),
                    }
                }
                Some(0..=0x1f) => return Err(self.error("no control character in a string")),
                Some(_) => self.at += 1,
            }
        }
        let text = &self.text[start..self.at];
        self.at += 1;
        Ok(text)
    }

    /// Skips digits, requiring at least one.
    fn digits(&mut self) -> Result<(), SyntaxError> {
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        if self.at == start {
            return Err(self.error("a digit"));
        }
        Ok(())
    }

    /// A number as JSON writes it: `-? (0 | [1-9][0-9]*) (. digits)? ([eE] [+-]? digits)?`.
    fn number(&mut self) -> Result<(), SyntaxError> {
        if self.text.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.text.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits()?,
            _ => return Err(self.error("a digit")),
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            self.digits()?;
        }
        if let Some(b'e' | b'E') = self.text.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.text.get(self.at) {
                self.at += 1;
            }
            self.digits()?;
        }
        Ok(())
    }

    /// Any value, nested at most `depth` more levels; returns its raw text.
    pub(crate) fn value(&mut self, depth: usize) -> Result<&'a [u8], SyntaxError> {
        self.skip_space();
        let start = self.at;
        match self.text.get(self.at) {
            Some(b'"') => self.string().map(drop)?,
            Some(b'[' | b'{') if depth == 0 => {
                return Err(self.error("at most 16 levels of nesting"))
            }
            Some(b'[') => self.array(|json| json.value(depth - 1).map(drop))?,
            Some(b'{') => self.object(|json, _| json.value(depth - 1).map(drop))?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            _ => {
                let rest = &self.text[self.at..];
                let literal = [&b"null"[..], b"true", b"false"]
                    .into_iter()
                    .find(|literal| rest.starts_with(literal))
                    .ok_or(self.error("a value"))?;
                self.at += literal.len();
            }
        }
        Ok(&self.text[start..self.at])
    }

    /// Calls `each` on every element of an array.
    pub(crate) fn array(
        &mut self,
        each: impl FnMut(&mut Self) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        self.sequence(b'[', b']', "'[' (an array)", "',' or ']'", each)
    }

    /// Calls `each` on every key (and its value) of an object.
    pub(crate) fn object(
        &mut self,
        mut each: impl FnMut(&mut Self, &'a [u8]) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        self.sequence(b'{', b'}', "'{' (an object)", "',' or '}'", |json| {
            let key = json.string()?;
            json.expect(b':', "':'")?;
            each(json, key)
        })
    }

    /// `open`, then items separated by commas (each read by `item`), then `close`.
    fn sequence(
        &mut self,
        open: u8,
        close: u8,
        opening: &'static str,
        between: &'static str,
        mut item: impl FnMut(&mut Self) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        self.expect(open, opening)?;
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error(between)),
            }
        }
    }
}

/// The elements of a JSON array given as raw, syntax-checked text (as [`Json::value`] returns
/// it), each as raw text; `None` when `text` is not an array.
pub(crate) fn elements<'a>(text: &'a [u8], mut each: impl FnMut(&'a [u8]) -> bool) -> Option<bool> {
    if text.first() != Some(&b'[') {
        return None;
    }
    let mut json = Json::new(text);
    let mut all = true;
    json.array(|json| {
        let element = json.value(MAX_NESTING)?;
        all = all && each(element);
        Ok(())
    })
    .ok()?;
    Some(all)
}

/// The integer a raw JSON number is, when it is one (no fraction, no exponent) that fits `i64`.
/// `-0` is 0, as Arrow C++ (RapidJSON) reads it (serde_json, and so arrow-rs, reads `-0.0`).
pub(crate) fn integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: i64 = 0;
    for &digit in digits {
        let digit = i64::from(digit - b'0');
        value = value.checked_mul(10)?;
        value = if negative {
            value.checked_sub(digit)?
        } else {
            value.checked_add(digit)?
        };
    }
    Some(value)
}
