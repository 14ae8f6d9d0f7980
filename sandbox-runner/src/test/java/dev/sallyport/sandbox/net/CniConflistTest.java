package dev.sallyport.sandbox.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.policy.LiteralAddresses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner's edit of nerdctl's conflist, on the file as {@code nerdctl network create --internal} writes it (Go's
 * {@code json.MarshalIndent}, two spaces; the IPAM map's keys sorted; no routes, no {@code isGateway}). The edit with
 * the real CNI bridge plugin: {@link CniRoutesHostTest}.
 */
class CniConflistTest {

    static final String NAME = "sallyport-d7e5a1b2";
    static final SandboxNetwork NETWORK = new SandboxNetwork("d7e5a1b2", Ipv4Subnet.parse("10.213.9.0/24"), 3128);

    /**
     * What nerdctl 2.x writes for the runner's {@code network create} of {@link #NETWORK}, with an {@code mtu} option
     * besides (a number must come back as it was).
     */
    static final String INTERNAL = """
            {
              "cniVersion": "1.0.0",
              "name": "sallyport-d7e5a1b2",
              "nerdctlID": "6f1c0f8e0d2b4c1d9b2a3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b",
              "nerdctlLabels": {
                "dev.sallyport.sandbox": "d7e5a1b2"
              },
              "plugins": [
                {
                  "type": "bridge",
                  "bridge": "br-6f1c0f8e0d2b",
                  "mtu": 1450,
                  "hairpinMode": true,
                  "ipam": {
                    "ranges": [
                      [
                        {
                          "gateway": "10.213.9.1",
                          "subnet": "10.213.9.0/24"
                        }
                      ]
                    ],
                    "type": "host-local"
                  }
                },
                {
                  "type": "firewall",
                  "ingressPolicy": "same-bridge"
                },
                {
                  "type": "tuning"
                }
              ]
            }""";

    @TempDir
    Path dir;

    @Test
    void theRoutesGoIntoTheBridgePluginsIpamAndEverythingElseStaysAsNerdctlWroteIt() throws Exception {
        Path file = conflist(INTERNAL, "rw-r--r--");

        CniConflist.addRoutes(file, NAME, NETWORK.guestRoutes());

        String ipamEnd = "\"type\": \"host-local\"\n      }";
        assertThat(INTERNAL).contains(ipamEnd);
        assertThat(Files.readString(file)).isEqualTo(INTERNAL.replace(ipamEnd, "\"type\": \"host-local\",\n"
                + "        \"routes\": [\n"
                + "          {\n"
                + "            \"dst\": \"198.18.0.0/15\",\n"
                + "            \"gw\": \"10.213.9.1\"\n"
                + "          }\n"
                + "        ]\n"
                + "      }") + "\n");
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
        try (var files = Files.list(dir)) {
            assertThat(files).as("no temporary file left").containsExactly(file);
        }

        String once = Files.readString(file);
        CniConflist.addRoutes(file, NAME, NETWORK.guestRoutes());
        assertThat(Files.readString(file)).as("a second edit adds nothing").isEqualTo(once);
    }

    @Test
    void withLiteralAddressesCapturedTheDefaultRouteViaTheGatewayFollowsAndRoutesAlreadyThereStay() throws Exception {
        Path file = conflist(INTERNAL.replace("\"type\": \"host-local\"", """
                "type": "host-local", "routes": [{"dst": "10.99.0.0/16", "gw": "10.213.9.9"}]"""), "rw-------");

        CniConflist.addRoutes(file, NAME, NETWORK.withLiterals(LiteralAddresses.CAPTURE).guestRoutes());

        assertThat(Files.readString(file).replaceAll("\\s+", "")).contains("\"routes\":["
                + "{\"dst\":\"10.99.0.0/16\",\"gw\":\"10.213.9.9\"},"
                + "{\"dst\":\"198.18.0.0/15\",\"gw\":\"10.213.9.1\"},"
                + "{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.213.9.1\"}]");
        assertThat(Files.getPosixFilePermissions(file)).as("the mode is the original's")
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void whatIsNotNerdctlsConflistForThisNetworkIsOneClearLineAndTheFileStaysAsItWas() throws Exception {
        Path missing = dir.resolve("nerdctl-" + NAME + ".conflist");
        assertThatThrownBy(() -> CniConflist.addRoutes(missing, NAME, NETWORK.guestRoutes()))
                .isInstanceOf(IOException.class).hasMessage(missing + ": missing (expected: the conflist 'nerdctl "
                        + "network create' wrote for " + NAME + ")");

        assertRefused(INTERNAL.replace("\"bridge\",", "\"macvlan\","), ": plugins: no plugin of type 'bridge' "
                + "(expected: the bridge plugin nerdctl writes for a bridge network)");
        assertRefused(INTERNAL.replace("\"host-local\"", "\"dhcp\""), ": the bridge plugin's ipam: an object "
                + "(expected: an object of type 'host-local', as nerdctl writes it)");
        assertRefused(INTERNAL.replace("\"ipam\":", "\"ipam0\":"), ": the bridge plugin's ipam: absent or null "
                + "(expected: an object of type 'host-local', as nerdctl writes it)");
        assertRefused(INTERNAL.replace("\"type\": \"host-local\"", "\"type\": \"host-local\", \"routes\": {}"),
                ": the bridge plugin's ipam.routes: an object (expected: an array of routes)");
        assertRefused(INTERNAL.replace("\"name\": \"" + NAME + "\"", "\"name\": \"bridge\""),
                ": name: 'bridge' (expected: a conflist named '" + NAME + "')");
        assertRefused(INTERNAL.replace("\"mtu\": 1450,", "\"mtu\": 1450, \"mtu\": 1500,"),
                ": not valid JSON: Duplicate field 'mtu' at line 12 column 25 (expected: a CNI conflist as nerdctl "
                        + "writes it)");
        assertRefused(INTERNAL.substring(0, 200), ": not valid JSON: Unexpected end-of-input");
    }

    @Test
    void inspectsNativeOutputNamesTheFileAndTheBridge() throws Exception {
        String output = """
                [
                    {
                        "CNI": %s,
                        "NerdctlID": "6f1c",
                        "NerdctlLabels": {"dev.sallyport.sandbox": "d7e5a1b2"},
                        "File": "/home/ann/.config/cni/net.d/default/nerdctl-sallyport-d7e5a1b2.conflist",
                        "Containers": null
                    }
                ]
                """.formatted(INTERNAL);

        assertThat(CniConflist.inspected(output, NAME)).isEqualTo(new CniConflist.Inspected(
                Path.of("/home/ann/.config/cni/net.d/default/nerdctl-sallyport-d7e5a1b2.conflist"), "br-6f1c0f8e0d2b"));
        assertThat(CniConflist.inspected(output.replace("\"bridge\",", "\"macvlan\","), NAME).bridge())
                .isEqualTo("(none)");

        String where = "nerdctl network inspect --mode=native " + NAME;
        assertThatThrownBy(() -> CniConflist.inspected("[]\n", NAME)).hasMessage(where
                + ": an array of 0 (expected: a JSON array holding one network, as nerdctl >= 2.1.4 prints)");
        assertThatThrownBy(() -> CniConflist.inspected(output.replaceAll("\"File\": \"[^\"]*\",", ""), NAME))
                .hasMessage(where + ": File: absent or null (expected: the absolute path of the network's conflist)");
        assertThatThrownBy(() -> CniConflist.inspected(output.replace("\"File\": \"/home", "\"File\": \"home"), NAME))
                .hasMessageStartingWith(where + ": File: 'home/ann/");
        assertThatThrownBy(() -> CniConflist.inspected("", NAME)).hasMessage(where + ": empty (expected: JSON)");
    }

    private void assertRefused(String text, String message) throws IOException {
        Path file = conflist(text, "rw-r--r--");
        assertThatThrownBy(() -> CniConflist.addRoutes(file, NAME, NETWORK.guestRoutes()))
                .isInstanceOf(IOException.class).message().startsWith(file + message);
        assertThat(Files.readString(file)).isEqualTo(text);
    }

    private Path conflist(String text, String mode) throws IOException {
        Path file = dir.resolve("nerdctl-" + NAME + ".conflist");
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }
}
