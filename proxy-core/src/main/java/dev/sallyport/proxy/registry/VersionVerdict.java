package dev.sallyport.proxy.registry;

/**
 * What a registry's rules concluded for one version of a package.
 *
 * @param reason null when the version is allowed; otherwise a {@link dev.sallyport.policy.RegistryReasons} code
 */
public record VersionVerdict(String version, String reason) {

    public boolean refused() {
        return reason != null;
    }
}
