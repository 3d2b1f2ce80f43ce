//! Writing to standard output.

/// Writes `text` to standard output. A reader that closed the pipe early
/// (`octopus … | head -2`) took what it wanted: that is no error, and the
/// command ends quietly with success, as other command-line tools do.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        outcome => Ok(outcome?),
    }
}
