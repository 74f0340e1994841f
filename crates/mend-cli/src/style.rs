//! Terminal styling: a few ANSI colours, only when the stream is a terminal.
//!
//! Invariant: with colour off every method returns its input unchanged, so output that
//! goes to a pipe or a file (and every test snapshot) is plain text.

use std::io::IsTerminal;

/// Paints text for one output stream.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    on: bool,
}

impl Palette {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set (to anything).
    pub fn for_stdout() -> Palette {
        Palette {
            on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Errors.
    pub fn red(self, text: &str) -> String {
        self.paint("1;31", text)
    }

    /// Warnings.
    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Valid bodies.
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// JSON pointers and links.
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }

    /// Secondary text: provider quotes, headers.
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Emphasis: file names.
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    /// A severity word in its colour.
    pub fn severity(self, s: mend::Severity, text: &str) -> String {
        match s {
            mend::Severity::Error => self.red(text),
            mend::Severity::Warning => self.yellow(text),
        }
    }
}
