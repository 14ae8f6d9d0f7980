package dev.sallyport.policy;

/** Strict decimal port parsing: digits only, no sign, no leading zeros. */
final class Ports {

    private Ports() {}

    static int parse(String s, int min) {
        boolean digits = !s.isEmpty() && s.length() <= 5 && s.chars().allMatch(c -> c >= '0' && c <= '9')
                && !(s.length() > 1 && s.charAt(0) == '0');
        int port = digits ? Integer.parseInt(s) : -1;
        if (port < min || port > 65535) {
            throw new IllegalArgumentException("'" + HostNames.printable(s) + "' is not a valid port (expected: "
                    + min + "..65535)");
        }
        return port;
    }
}
