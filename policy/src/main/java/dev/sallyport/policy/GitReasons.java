package dev.sallyport.policy;

/**
 * Reason codes of git push decisions ({@code git:} entries): why a push, or its discovery request, was refused
 * ({@code X-Sallyport-Reason}, the audit record's {@code reason}, and the message {@code git} prints).
 */
public final class GitReasons {

    /** The first entry matching the repository says {@code push: deny}. */
    public static final String PUSH_DENIED = "git_push_denied";
    /** The host has {@code git:} entries and none of them names the repository. */
    public static final String REPOSITORY_NOT_LISTED = "git_repository_not_listed";
    /** The entry allows pushes, but not to this ref ({@code refs}). */
    public static final String REF_NOT_ALLOWED = "git_ref_not_allowed";
    /** The update deletes a ref and the entry does not say {@code delete: true}. */
    public static final String DELETE_REFUSED = "git_delete_refused";
    /** The update changes a ref that exists and the entry says {@code create_only: true}. */
    public static final String UPDATE_REFUSED = "git_update_refused";
    /** The ref name is not one git accepts ({@code ..}, control characters, <code>@{</code>, ...). */
    public static final String REF_INVALID = "git_ref_invalid";
    /** Another ref of the same push was refused: nothing of the push goes upstream. */
    public static final String PUSH_INCOMPLETE = "git_push_incomplete";
    /** The request body's command list is not pkt-lines of ref updates as git sends them (fail closed). */
    public static final String COMMANDS_UNREADABLE = "git_commands_unreadable";
    /** The command list is longer than the proxy reads before deciding. */
    public static final String COMMANDS_TOO_LONG = "git_commands_too_long";
    /** The command list did not arrive within the idle timeout: the held dial is given up. */
    public static final String COMMANDS_TIMEOUT = "git_commands_timeout";
    /** The push body has a {@code Content-Encoding} (git never sends one for a push): refused unread. */
    public static final String BODY_ENCODED = "git_body_encoded";
    /** The request names the receive-pack service in a shape the proxy does not read (fail closed). */
    public static final String REQUEST_UNREADABLE = "git_request_unreadable";

    private GitReasons() {}
}
