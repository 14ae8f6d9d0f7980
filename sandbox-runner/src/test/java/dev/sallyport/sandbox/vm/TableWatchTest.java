package dev.sallyport.sandbox.vm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Reading the spoofed sources out of {@code nft list table}'s text (as nftables 1.0.6 prints it). */
class TableWatchTest {

    static final String LISTING = """
            table inet sallyport_ab12cd34 {
            \tset spoofed {
            \t\ttype ipv4_addr
            \t\tsize 256
            \t\tflags dynamic
            \t\telements = { 10.213.9.2, 10.213.7.77,
            \t\t\t     10.213.7.78 }
            \t}

            \tchain source {
            \t\ttype filter hook prerouting priority raw; policy accept;
            \t\tiifname "br-x" ip saddr != 10.213.7.2 add @spoofed { ip saddr }
            \t\tiifname "br-x" ip saddr != 10.213.7.2 counter packets 3 bytes 180 drop
            \t\tiifname != "br-x" ip saddr 10.213.7.2 drop
            \t}
            }
            """;

    @Test
    void theSetsElementsAreTheSpoofedSourcesAndNothingElseInTheTableIs() {
        assertThat(TableWatch.spoofedSources(LISTING)).containsExactly("10.213.9.2", "10.213.7.77", "10.213.7.78");
    }

    @Test
    void anEmptySetHasNone() {
        String empty = LISTING.replaceAll("\t\telements = \\{[^}]*}\n", "");
        assertThat(empty).doesNotContain("elements");
        assertThat(TableWatch.spoofedSources(empty)).isEmpty();
    }
}
