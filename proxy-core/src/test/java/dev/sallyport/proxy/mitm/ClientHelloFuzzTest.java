package dev.sallyport.proxy.mitm;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Promise;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Fuzz target: the ClientHello peek of an intercepted tunnel to {@code api.example.com} (Netty's SNI parsing,
 * then the tunnel's {@link SniVerdict}, as {@link MintingMapping} and {@link PassthroughHandler} ask it), the hello
 * fed in pieces for as long as the tunnel stays open. Invariants: the first name the peek asks about is the first
 * host_name of the hello's server_name extension as an independent parser here reads it (when it can read the
 * hello); a name is accepted only when it names the CONNECT target; once a name was refused, no later question
 * about the same hello is accepted (Netty asks again, possibly about another name, when more of a refused hello
 * arrives); nothing escapes the pipeline; every buffer is released. Kept inputs:
 * {@code src/test/resources/dev/sallyport/proxy/mitm/ClientHelloFuzzTestInputs/}.
 */
class ClientHelloFuzzTest {

    private static final String TARGET = "api.example.com";

    @FuzzTest
    void theNameCheckedIsTheNameSent(FuzzedDataProvider data) {
        int piece = data.consumeInt(1, 512);
        byte[] hello = data.consumeRemainingAsBytes();
        List<String> asked = new ArrayList<>();
        List<Boolean> accepted = new ArrayList<>();
        SniVerdict verdict = new SniVerdict(TARGET);
        EmbeddedChannel ch = new EmbeddedChannel(new SniHandler((String sni, Promise<SslContext> promise) -> {
            asked.add(sni);
            SniRefused refused = verdict.check(sni);
            accepted.add(refused == null);
            return promise.setFailure(refused != null ? refused : new IllegalStateException("accepted; stop here"));
        }, 10_000), new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                ctx.close();    // the refusal (or the stop) travels here, as to InterceptHandshakeHandler
            }
        });
        try {
            for (int i = 0; i < hello.length && ch.isOpen(); i += piece) {
                ch.writeInbound(Unpooled.copiedBuffer(hello, i, Math.min(piece, hello.length - i)));
            }
        } finally {
            for (Object o; (o = ch.readInbound()) != null; ) {
                ReferenceCountUtil.release(o);
            }
            ch.finishAndReleaseAll();
        }
        if (asked.isEmpty()) {
            return;
        }
        String sni = asked.getFirst();
        String parsed = Hello.firstHostName(hello);
        // a hello the strict reading cannot read (lengths that disagree) is the TLS stack's to refuse, whatever name
        // the peek took from it; one it can read must give the peek the same name
        if (sni != null && parsed != null && !Hello.AMBIGUOUS.equals(parsed)) {
            assertThat(sni).as("the peek's name is the hello's").isEqualToIgnoringCase(parsed);
        }
        for (int i = 0; i < asked.size(); i++) {
            if (accepted.get(i)) {
                String name = asked.get(i);
                assertThat(name == null ? null : name.toLowerCase(Locale.ROOT).replaceAll("\\.$", ""))
                        .as("an accepted name names the CONNECT target").isEqualTo(TARGET);
                assertThat(accepted.subList(0, i)).as("no name accepted after a refusal, asked: %s", asked)
                        .doesNotContain(false);
            }
        }
    }

    /** A strict reading of one ClientHello across TLS records; the first host_name, or null. */
    static final class Hello {
        /** More than one server_name extension. */
        static final String AMBIGUOUS = "\u0000ambiguous";
        private final byte[] b;
        private int at;

        private Hello(byte[] b) {
            this.b = b;
        }

        static String firstHostName(byte[] records) {
            byte[] message = handshake(records);
            return message == null ? null : new Hello(message).read();
        }

        /** The handshake bytes of the leading handshake records, or null when they do not start one. */
        private static byte[] handshake(byte[] r) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int at = 0;
            while (at + 5 <= r.length && (r[at] & 0xff) == 0x16) {
                int len = ((r[at + 3] & 0xff) << 8) | (r[at + 4] & 0xff);
                int n = Math.min(len, r.length - at - 5);
                out.write(r, at + 5, n);
                at += 5 + len;
            }
            return out.size() == 0 ? null : out.toByteArray();
        }

        private String read() {
            try {
                if (u8() != 1) {
                    return null;
                }
                int length = u24();
                int end = at + length;
                at += 2 + 32;
                skip(u8());         // session id
                skip(u16());        // cipher suites
                skip(u8());         // compression methods
                int extLen = u16();
                int extEnd = at + extLen;
                String first = null;
                int serverNames = 0;
                while (at + 4 <= Math.min(extEnd, end)) {
                    int type = u16();
                    int len = u16();
                    int next = at + len;
                    if (type == 0 && ++serverNames == 1 && len >= 2) {
                        first = hostName(next);
                    }
                    at = next;
                }
                // two server_name extensions: TLS stacks refuse the hello (RFC 8446 4.2), whichever one a peek reads
                return serverNames > 1 ? AMBIGUOUS : first;
            } catch (IndexOutOfBoundsException e) {
                return null;
            }
        }

        /** The first host_name entry of the server_name list that starts here and ends by {@code end}. */
        private String hostName(int end) {
            int listLen = u16();
            int listEnd = Math.min(at + listLen, end);
            while (at + 3 <= listEnd) {
                int kind = u8();
                int n = u16();
                if (kind == 0) {
                    return new String(b, at, n, StandardCharsets.ISO_8859_1);    // as Netty reads it
                }
                skip(n);
            }
            return null;
        }

        private void skip(int n) {
            at += n;
        }

        private int u8() {
            return b[at++] & 0xff;
        }

        private int u16() {
            return (u8() << 8) | u8();
        }

        private int u24() {
            return (u8() << 16) | u16();
        }
    }
}
