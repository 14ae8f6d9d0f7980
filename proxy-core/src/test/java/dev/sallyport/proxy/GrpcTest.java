package dev.sallyport.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sallyport.proxy.events.AuditFields;
import dev.sallyport.proxy.testing.MapResolver;
import dev.sallyport.proxy.testing.ProxyFixture;
import dev.sallyport.proxy.testing.Upstreams;
import dev.sallyport.testing.ExternalProcess;
import dev.sallyport.testing.Prerequisites;
import dev.sallyport.testing.TestPki;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.HttpConnectProxiedSocketAddress;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * grpc-java through the proxy against a grpc-java server on loopback: unary and bidirectional-streaming calls with
 * the policy, secrets (in the call's metadata) and audit of any exchange; statuses and trailers pass; a refusal is a
 * gRPC status that names the reason; a gRPC call toward an upstream that speaks only HTTP/1.1 fails with one too.
 * grpc-node ({@code @grpc/grpc-js}) makes the same calls configured by the environment alone.
 */
class GrpcTest {

    static final String VALUE = "real-grpc-token-value-41e8";
    static final String PH = "sallyport-ph-grpcmetadataplaceholder";
    static final String OTHER_PH = "sallyport-ph-grpcotherhostplaceholder";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization",
            Metadata.ASCII_STRING_MARSHALLER);

    /** Raw bytes, so that no generated code is needed. */
    static final MethodDescriptor.Marshaller<byte[]> RAW = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    static final MethodDescriptor<byte[], byte[]> SAY = method("Say", MethodDescriptor.MethodType.UNARY);
    static final MethodDescriptor<byte[], byte[]> CHAT = method("Chat", MethodDescriptor.MethodType.BIDI_STREAMING);

    /** Short, so that a call outlives it: an exchange with traffic is never ended by the idle timeout. */
    static final Duration IDLE = Duration.ofMillis(800);

    static Server server;
    static Upstreams h1;
    static ProxyFixture proxy;
    static final List<String> seenAuthorization = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        Path dir = ProxyFixture.tempDir();
        TestPki pki = TestPki.create();
        Path root = pki.rootPem(dir);
        TestPki.Issued cert = pki.issue("grpc.test");
        server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .sslContext(GrpcSslContexts.forServer(cert.writeCertPem(dir).toFile(), cert.writeKeyPem(dir).toFile())
                        .build())
                .addService(ServerInterceptors.intercept(echoService(), recordAuthorization()))
                .build().start();
        h1 = Upstreams.start("h1.test");
        Path value = Files.writeString(dir.resolve("token"), VALUE + "\n");
        String rules = "  - name: grpc\n    hosts: [grpc.test]\n    ports: [" + server.getPort() + "]\n"
                + "  - name: h1\n    hosts: [h1.test]\n    ports: [" + h1.tls.port() + "]\n";
        String secrets = "secrets:\n"
                + "  - name: TOKEN\n    from: file:" + value + "\n    hosts: [grpc.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + PH + "\n"
                + "  - name: OTHER\n    from: file:" + value + "\n    hosts: [elsewhere.test]\n"
                + "    headers: [Authorization]\n    placeholder: " + OTHER_PH + "\n";
        // both upstreams' roots, in one trust file
        Path roots = Files.writeString(dir.resolve("roots.pem"), Files.readString(root) + Files.readString(h1.root));
        proxy = ProxyFixture.start(ProxyFixture.policy(roots, "grpc.test:" + server.getPort() + ", h1.test:"
                + h1.tls.port(), "  http2: true\n  timeouts: {idle: " + IDLE.toMillis() + "ms}\n", rules) + secrets,
                new MapResolver().map("grpc.test", "127.0.0.1").map("h1.test", "127.0.0.1"), dir);
    }

    @AfterAll
    static void stop() throws Exception {
        proxy.proxy.flushAudit();
        String audit = Files.readString(proxy.auditFile);
        proxy.close();
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        h1.close();
        assertThat(audit).doesNotContain(VALUE);
    }

    /** A channel to {@code host:port} through the proxy, trusting the proxy's CA, as a user would configure it. */
    static ManagedChannel channel(String host, int port) throws IOException {
        return NettyChannelBuilder.forTarget("dns:///" + host + ":" + port)
                .proxyDetector(target -> HttpConnectProxiedSocketAddress.newBuilder()
                        .setTargetAddress((InetSocketAddress) target).setProxyAddress(proxy.address()).build())
                .sslContext(GrpcSslContexts.forClient().trustManager(proxy.caPem.toFile()).build())
                .build();
    }

    static CallOptions deadline() {
        return CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    static ClientCall<byte[], byte[]> call(ManagedChannel ch, MethodDescriptor<byte[], byte[]> m, String auth) {
        io.grpc.Channel intercepted = auth == null ? ch : io.grpc.ClientInterceptors.intercept(ch,
                io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(metadata(auth)));
        return intercepted.newCall(m, deadline());
    }

    static Metadata metadata(String auth) {
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, auth);
        return md;
    }

    @Test
    void aUnaryCallGetsItsPlaceholderSwappedInTheMetadataAndIsAuditedAsH2OnBothLegs() throws Exception {
        ManagedChannel ch = channel("grpc.test", server.getPort());
        try {
            byte[] reply = ClientCalls.blockingUnaryCall(call(ch, SAY, "Bearer " + PH), bytes("hello unary"));
            assertThat(text(reply)).isEqualTo("said: hello unary");
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(seenAuthorization).contains("Bearer " + VALUE).doesNotContain("Bearer " + PH);
        AuditFields f = proxy.events.await("exchange", e -> "/echo.Echo/Say".equals(e.path()));
        assertThat(f.protocol()).isEqualTo("h2");
        assertThat(f.upstreamProtocol()).isEqualTo("h2");
        assertThat(f.status()).isEqualTo(200);
        assertThat(f.secrets()).containsExactly("TOKEN");
    }

    @Test
    void aBidirectionalStreamCarriesEachMessageBothWaysBeforeTheNextIsSent() throws Exception {
        ManagedChannel ch = channel("grpc.test", server.getPort());
        try {
            BlockingQueue<String> replies = new LinkedBlockingQueue<>();
            CompletableFuture<Status> closed = new CompletableFuture<>();
            StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(call(ch, CHAT, null),
                    observer(replies, closed));
            for (int i = 0; i < 5; i++) {
                requests.onNext(bytes("message " + i));
                // the reply to this message arrives while the call's request stream is still open
                assertThat(replies.poll(10, TimeUnit.SECONDS)).isEqualTo("echo: message " + i);
            }
            requests.onCompleted();
            assertThat(closed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(proxy.events.await("exchange", e -> "/echo.Echo/Chat".equals(e.path())).status()).isEqualTo(200);
    }

    @Test
    void aStreamThatOutlivesTheIdleTimeoutWhileMessagesFlowIsNotCut() throws Exception {
        ManagedChannel ch = channel("grpc.test", server.getPort());
        ScheduledExecutorService pace = Executors.newSingleThreadScheduledExecutor();
        try {
            BlockingQueue<String> replies = new LinkedBlockingQueue<>();
            CompletableFuture<Status> closed = new CompletableFuture<>();
            StreamObserver<byte[]> requests = ClientCalls.asyncBidiStreamingCall(call(ch, CHAT, null),
                    observer(replies, closed));
            long started = System.nanoTime();
            int messages = 8;
            for (int i = 0; i < messages; i++) {
                String text = "tick " + i;
                // each message half an idle timeout after the last: the call lasts four idle timeouts in all
                pace.schedule(() -> requests.onNext(bytes(text)), IDLE.toMillis() / 2, TimeUnit.MILLISECONDS)
                        .get(10, TimeUnit.SECONDS);
                assertThat(replies.poll(10, TimeUnit.SECONDS)).isEqualTo("echo: " + text);
            }
            requests.onCompleted();
            assertThat(closed.get(10, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(IDLE.multipliedBy(3));
        } finally {
            pace.shutdownNow();
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static StreamObserver<byte[]> observer(BlockingQueue<String> replies, CompletableFuture<Status> closed) {
        return new StreamObserver<>() {
            @Override
            public void onNext(byte[] value) {
                replies.add(text(value));
            }

            @Override
            public void onError(Throwable t) {
                closed.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                closed.complete(Status.OK);
            }
        };
    }

    @Test
    void theServersStatusAndMessageReachTheClient() throws Exception {
        ManagedChannel ch = channel("grpc.test", server.getPort());
        try {
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(call(ch, SAY, null), bytes("missing")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(e.getStatus().getDescription()).isEqualTo("no such thing: missing");
                    });
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void anotherHostsPlaceholderIsRefusedAsPermissionDeniedAndNeverReachesTheServer() throws Exception {
        int before = seenAuthorization.size();
        ManagedChannel ch = channel("grpc.test", server.getPort());
        try {
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(call(ch, SAY, "Bearer " + OTHER_PH),
                    bytes("wrong host")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                        assertThat(e.getStatus().getDescription()).contains("sallyport").contains("secret_wrong_host");
                    });
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(seenAuthorization.subList(before, seenAuthorization.size())).isEmpty();
        assertThat(proxy.events.await("request", e -> "secret_wrong_host".equals(e.reason())).path())
                .isEqualTo("/echo.Echo/Say");
    }

    @Test
    void aCallTowardAnHttp11OnlyUpstreamFailsWithAStatusThatSaysWhy() throws Exception {
        ManagedChannel ch = channel("h1.test", h1.tls.port());
        try {
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(call(ch, SAY, null), bytes("to h1")))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.getStatus().getDescription()).contains("grpc_needs_h2");
                    });
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(h1.tls.requests).noneMatch(r -> r.contains("echo.Echo"));
        AuditFields f = proxy.events.await("exchange", e -> "grpc_needs_h2".equals(e.reason()));
        assertThat(f.upstreamProtocol()).isEqualTo("http/1.1");
        assertThat(f.status()).isEqualTo(502);
    }

    // ---- grpc-node (@grpc/grpc-js), configured by the environment alone ----

    /** Runs the grpc-node client with the proxy and the CA given as a sandboxed program gets them. */
    static ExternalProcess.Result node(String mode, String auth) throws Exception {
        Path modules = Path.of(System.getenv().getOrDefault("SALLYPORT_TEST_NODE_MODULES",
                "/var/cache/sallyport-test/node"), "node_modules");
        Prerequisites.require("@grpc/grpc-js", Files.isRegularFile(modules.resolve("@grpc/grpc-js/package.json")),
                "grpc-node under " + modules + " (scripts/install-deps.sh installs it)");
        Path script = Path.of(GrpcTest.class.getResource("/grpc/echo-client.js").toURI());
        List<String> command = new ArrayList<>(List.of("node", script.toString(), "grpc.test:" + server.getPort(),
                mode));
        if (auth != null) {
            command.add(auth);
        }
        return ExternalProcess.run(Duration.ofSeconds(30), command, null, Map.of(
                "NODE_PATH", modules.toString(),
                "https_proxy", proxy.proxyUrl(),
                "no_proxy", "", "NO_PROXY", "", "grpc_proxy", "",
                "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", proxy.caPem.toString()));
    }

    @Test
    void grpcNodeMakesAUnaryCallThroughTheProxyWithItsPlaceholderSwapped() throws Exception {
        int before = seenAuthorization.size();
        ExternalProcess.Result r = node("unary", "Bearer " + PH);
        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("REPLY said: hello from node").contains("STATUS 0");
        assertThat(seenAuthorization.subList(before, seenAuthorization.size())).containsExactly("Bearer " + VALUE);
    }

    @Test
    void grpcNodeStreamsBothWaysAndSeesAnotherHostsPlaceholderRefused() throws Exception {
        ExternalProcess.Result bidi = node("bidi", null);
        assertThat(bidi.exit()).as(bidi.stderr()).isZero();
        assertThat(bidi.stdout()).contains("REPLY echo: node 0", "REPLY echo: node 1", "REPLY echo: node 2")
                .contains("STATUS 0");
        ExternalProcess.Result refused = node("unary", "Bearer " + OTHER_PH);
        assertThat(refused.stdout()).contains("STATUS " + Status.Code.PERMISSION_DENIED.value() + " sallyport:")
                .contains("secret_wrong_host");
    }

    // ---- the service ----

    static MethodDescriptor<byte[], byte[]> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
                .setFullMethodName(MethodDescriptor.generateFullMethodName("echo.Echo", name))
                .setRequestMarshaller(RAW).setResponseMarshaller(RAW).build();
    }


    static ServerServiceDefinition echoService() {
        return ServerServiceDefinition.builder("echo.Echo")
                .addMethod(SAY, ServerCalls.asyncUnaryCall((request, reply) -> {
                    String said = text(request);
                    if (said.equals("missing")) {
                        reply.onError(Status.NOT_FOUND.withDescription("no such thing: missing").asException());
                        return;
                    }
                    reply.onNext(bytes("said: " + said));
                    reply.onCompleted();
                }))
                .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(reply -> new StreamObserver<byte[]>() {
                    @Override
                    public void onNext(byte[] value) {
                        reply.onNext(bytes("echo: " + text(value)));
                    }

                    @Override
                    public void onError(Throwable t) { }

                    @Override
                    public void onCompleted() {
                        reply.onCompleted();
                    }
                }))
                .build();
    }

    static ServerInterceptor recordAuthorization() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                              ServerCallHandler<Q, R> next) {
                String auth = headers.get(AUTHORIZATION);
                if (auth != null) {
                    seenAuthorization.add(auth);
                }
                return next.startCall(call, headers);
            }
        };
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
