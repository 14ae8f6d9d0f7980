package dev.sallyport.proxy.http;

/** RFC 9110 token characters. */
final class Tokens {

    private Tokens() {}

    static boolean isTchar(byte b) {
        return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
                || ("!#$%&'*+-.^_`|~".indexOf(b) >= 0 && b != 0);
    }

    static boolean isToken(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c > 0x7e || !isTchar((byte) c)) {
                return false;
            }
        }
        return !s.isEmpty();
    }
}
