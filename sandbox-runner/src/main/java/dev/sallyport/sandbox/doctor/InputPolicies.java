package dev.sallyport.sandbox.doctor;

import dev.sallyport.sandbox.net.SandboxNetwork;
import java.util.ArrayList;
import java.util.List;

/** Reads {@code nft list chains}: which base chains on the input hook drop what no rule accepted. */
final class InputPolicies {

    private InputPolicies() {
    }

    /** {@code "table FAMILY NAME chain CHAIN"} of every input-hook chain with {@code policy drop}, ours excepted. */
    static List<String> dropping(String listing) {
        List<String> found = new ArrayList<>();
        String table = "";
        String chain = "";
        for (String raw : listing.lines().toList()) {
            String line = raw.strip();
            if (line.startsWith("table ")) {
                table = line.substring(0, line.length() - (line.endsWith("{") ? 1 : 0)).strip();
            } else if (line.startsWith("chain ")) {
                chain = line.substring(0, line.length() - (line.endsWith("{") ? 1 : 0)).strip();
            } else if (line.contains("hook input") && line.contains("policy drop")
                    && !table.contains(" " + SandboxNetwork.TABLE_PREFIX)) {
                found.add(table + " " + chain);
            }
        }
        return found;
    }
}
