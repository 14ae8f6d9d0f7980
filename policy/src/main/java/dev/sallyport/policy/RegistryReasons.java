package dev.sallyport.policy;

/**
 * Reason codes of registry decisions: why a version was filtered out of a package document or its file refused
 * ({@code X-Sallyport-Reason} and the audit record's {@code reason}).
 */
public final class RegistryReasons {

    /** The package is on a {@code deny} list, or an {@code allow} list does not name it. */
    public static final String PACKAGE_NOT_ALLOWED = "package_not_allowed";
    /** The package is allowed only in pinned ranges, or denied in a range, and this version is outside/inside. */
    public static final String VERSION_NOT_ALLOWED = "version_not_allowed";
    /** An OSV record in the {@code advisories} folder names this version. */
    public static final String KNOWN_MALICIOUS = "known_malicious";
    /** Published less than {@code min_release_age} ago. */
    public static final String RELEASE_TOO_NEW = "release_too_new";
    /** {@code min_release_age} is set and the document gives no publish time for this version: fail closed. */
    public static final String RELEASE_TIME_UNKNOWN = "release_time_unknown";
    /** npm: the version has install scripts and the version before it had none. */
    public static final String INSTALL_SCRIPT_ADDED = "install_script_added";
    /** npm: every earlier version had provenance attestations and this one has none. */
    public static final String PROVENANCE_DROPPED = "provenance_dropped";
    /** The package document could not be read (not JSON, not the expected shape, too large). */
    public static final String DOCUMENT_UNREADABLE = "registry_document_unreadable";
    /** A file was asked for whose version the package document does not list (or could not be fetched). */
    public static final String VERSION_UNKNOWN = "version_unknown";

    private RegistryReasons() {}
}
