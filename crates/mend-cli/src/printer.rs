//! The one place the binary writes: results to stdout, bad-input lines, summaries and
//! the progress bar to stderr.
//!
//! Invariant: the progress bar is drawn only when stderr is a terminal, and every write
//! to either stream while it is drawn goes through `suspend`, so lines never tear.

use std::io::{self, BufWriter, IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::style::Palette;

/// Output for one command run.
pub struct Printer {
    out: BufWriter<io::Stdout>,
    /// Colours for stdout.
    pub palette: Palette,
    bar: Option<ProgressBar>,
}

impl Printer {
    /// A printer on the process's stdout and stderr.
    pub fn new() -> Printer {
        Printer {
            out: BufWriter::new(io::stdout()),
            palette: Palette::for_stdout(),
            bar: None,
        }
    }

    /// Show a progress bar over `len` inputs, when stderr is a terminal.
    pub fn start_progress(&mut self, len: u64) {
        if !io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} files, {msg} {elapsed}")
        {
            bar.set_style(style);
        }
        self.bar = Some(bar);
    }

    /// One input done; `bodies` checked so far.
    pub fn advance(&self, bodies: usize) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{bodies} bodies"));
            bar.inc(1);
        }
    }

    /// Remove the bar before the summary.
    pub fn finish_progress(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Write text to stdout (the caller ends its lines).
    pub fn out(&mut self, text: &str) -> io::Result<()> {
        match &self.bar {
            Some(bar) => {
                let out = &mut self.out;
                bar.suspend(|| {
                    out.write_all(text.as_bytes())?;
                    out.flush()
                })
            }
            None => self.out.write_all(text.as_bytes()),
        }
    }

    /// One line on stderr. A failing stderr is ignored: there is nowhere left to say so.
    pub fn err_line(&mut self, line: &str) {
        // Keep stdout and stderr in order when both are the same terminal.
        let _ = self.out.flush();
        let write = || {
            let mut e = io::stderr().lock();
            let _ = writeln!(e, "{line}");
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Say that an input could not be checked: `mend: LABEL: what`.
    pub fn bad_input(&mut self, label: &str, what: &impl std::fmt::Display) {
        self.err_line(&format!("mend: {label}: {what}"));
    }

    /// Flush stdout.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
