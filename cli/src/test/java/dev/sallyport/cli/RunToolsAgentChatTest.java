package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sallyport.testing.Await;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.tools.ChatStream;
import dev.sallyport.testing.tools.HttpsSite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent-shaped client inside {@code sallyport run}: a chat loop (Python's standard library) that streams each
 * reply from an LLM host ({@code llm.example.test}, its key a secret) and, as coding agents do, resends the whole
 * conversation with every request. Its first turn runs {@code env} as a tool, so from the second request on the
 * body carries the key's placeholder. That request must still reach the LLM host, the placeholder in its body
 * unchanged (never swapped: only a listed header is), the real key only in its {@code Authorization}; and the same
 * conversation sent to another host ({@code other.example.test}) is refused before it leaves. Each reply's first
 * piece must reach the client while the stream is still open (the host holds the rest until the test has seen
 * it in the client's transcript). See {@link ToolRun} for how the run is set up.
 */
class RunToolsAgentChatTest {
    private static final String LLM = "llm.example.test";
    private static final String OTHER = "other.example.test";
    private static final List<String> REPLY = List.of("Let me", " look.", " Done.");
    private static final String AGENT = """
            import json, os, subprocess, sys, urllib.error, urllib.request

            def chat(url, messages, transcript, key=True):
                headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
                if key:
                    headers["Authorization"] = "Bearer " + os.environ["LLM_API_KEY"]
                body = json.dumps({"model": "test-model", "stream": True, "messages": messages}).encode()
                request = urllib.request.Request(url, data=body, headers=headers, method="POST")
                reply = []
                with urllib.request.urlopen(request, timeout=120) as response, open(transcript, "a") as out:
                    for raw in response:
                        line = raw.decode().strip()
                        if not line.startswith("data: "):
                            continue
                        if line == "data: [DONE]":
                            break
                        piece = json.loads(line[len("data: "):])["choices"][0]["delta"].get("content", "")
                        reply.append(piece)
                        out.write(piece + "\\n")
                        out.flush()
                return "".join(reply)

            llm, other = sys.argv[1], sys.argv[2]
            messages = [{"role": "user", "content": "What is in my environment?"}]
            messages.append({"role": "assistant", "content": chat(llm, messages, "turn1.txt")})
            tool = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout
            messages.append({"role": "tool", "content": tool})
            messages.append({"role": "assistant", "content": chat(llm, messages, "turn2.txt")})
            try:
                chat(other, messages, "other.txt", key=False)
                print("other: sent")
            except urllib.error.HTTPError as refused:
                print("other:", refused.code, refused.headers.get("X-Sallyport-Reason"))
            """;

    @TempDir
    Path dir;

    @Test
    void aStreamingChatWhoseBodyCarriesThePlaceholderReachesTheLlmHostAndNoOtherHost() throws Exception {
        String key = "sk-test-" + HexFormat.of().formatHex(SecureRandom.getInstanceStrong().generateSeed(16));
        try (ToolRun tools = new ToolRun(dir)) {
            ChatStream chat = new ChatStream("Bearer " + key, REPLY);
            HttpsSite llm = tools.site(LLM).route("/v1/chat/completions", chat);
            HttpsSite other = tools.site(OTHER).route("/", exchange -> HttpsSite.respond(exchange, 200, "ok\n"));
            Path workspace = tools.workspace();
            Files.writeString(workspace.resolve("agent.py"), AGENT);
            String policy = """
                    secrets:
                      - name: LLM_API_KEY
                        from: env:LLM_API_KEY
                        hosts: [%s]
                        headers: [Authorization]
                    """.formatted(LLM);
            CompletableFuture<ExternalProcess.Result> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return tools.run(policy, Map.of("LLM_API_KEY", key), "printf %s \"$LLM_API_KEY\" > placeholder.txt"
                            + " && python3 agent.py "
                            + tools.origin(LLM) + "/v1/chat/completions " + tools.origin(OTHER) + "/v1/chat/completions"
                            + " > agent.out");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            for (String turn : List.of("turn1.txt", "turn2.txt")) {
                Path transcript = workspace.resolve(turn);
                Await.until(turn + " shows the reply's first piece while its stream is open",
                        ToolRun.TIMEOUT, () -> running.isDone() || firstLine(transcript).equals(REPLY.getFirst()));
                assertThat(firstLine(transcript)).as("%s; the run: %s", turn,
                        running.isDone() ? running.join().stderr() : "still running").isEqualTo(REPLY.getFirst());
                chat.release();
            }
            ExternalProcess.Result run = running.join();

            assertThat(run.exit()).as(run.stderr()).isZero();
            String placeholder = Files.readString(workspace.resolve("placeholder.txt"));
            assertThat(placeholder).matches("sallyport-ph-[a-z2-7]{26}");
            for (String turn : List.of("turn1.txt", "turn2.txt")) {
                assertThat(workspace.resolve(turn)).content().isEqualTo(String.join("\n", REPLY) + "\n");
            }
            List<HttpsSite.Request> requests = llm.requests();
            assertThat(requests).hasSize(2).allSatisfy(r -> {
                assertThat(r.header("Authorization")).isEqualTo("Bearer " + key);
                assertThat(r.bodyText()).doesNotContain(key);
            });
            assertThat(requests.getFirst().bodyText()).doesNotContain(placeholder);
            assertThat(requests.getLast().bodyText()).as("the second request's body, as the agent sent it")
                    .contains("LLM_API_KEY=" + placeholder);
            assertThat(other.requests()).as("what reached " + OTHER).isEmpty();
            assertThat(workspace.resolve("agent.out")).content().startsWith("other: 4").contains("secret_");
            String audit = tools.audit();
            assertThat(audit).doesNotContain(key).contains("\"host\":\"" + OTHER + "\"");
            List<String> exchanges = audit.lines().filter(l -> l.contains("\"host\":\"" + LLM + "\"")
                    && l.contains("\"event\":\"request\"") && l.contains("\"status\":")).toList();
            assertThat(exchanges).as("the LLM host's completed exchanges in the audit log").hasSize(2)
                    .allSatisfy(l -> assertThat(l).contains("\"decision\":\"allow\"", "\"status\":200"));
            assertThat(exchanges.getFirst()).doesNotContain("placeholders_forwarded");
            assertThat(exchanges.getLast()).as("the second exchange: the placeholder seen, not refused")
                    .contains("\"placeholders_forwarded\":[\"LLM_API_KEY\"]");
            assertThat(run.stdout() + run.stderr()).doesNotContain(key);
        }
    }

    private static String firstLine(Path transcript) {
        try {
            List<String> lines = Files.exists(transcript) ? Files.readAllLines(transcript) : List.of();
            return lines.isEmpty() ? "" : lines.getFirst();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
