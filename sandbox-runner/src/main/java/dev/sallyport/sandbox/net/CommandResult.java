package dev.sallyport.sandbox.net;

/** What a finished host command returned: exit status and captured output. */
public record CommandResult(int exit, String stdout, String stderr) {

    /** The first line of stderr (or stdout when stderr is empty), for one-line error messages. */
    public String firstErrorLine() {
        String text = stderr.isBlank() ? stdout : stderr;
        String trimmed = text.strip();
        int newline = trimmed.indexOf('\n');
        if (trimmed.isEmpty()) {
            return "(no output)";
        }
        return newline < 0 ? trimmed : trimmed.substring(0, newline);
    }
}
