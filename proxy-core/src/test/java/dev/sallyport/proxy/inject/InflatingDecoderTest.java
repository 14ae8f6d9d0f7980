package dev.sallyport.proxy.inject;

import static dev.sallyport.proxy.inject.Fixtures.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import org.junit.jupiter.api.Test;

class InflatingDecoderTest {

    /** A gzip member with every optional header field (FEXTRA, FNAME, FCOMMENT, FHCRC) set. */
    private static byte[] gzipWithAllHeaderFields(byte[] data) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(new byte[] {0x1f, (byte) 0x8b, 8, 2 | 4 | 8 | 16, 0, 0, 0, 0, 0, 3});
        out.write(new byte[] {3, 0, 'a', 'b', 'c'});
        out.writeBytes(bytes("name.txt\0"));
        out.writeBytes(bytes("a comment\0"));
        out.write(new byte[] {0x12, 0x34});
        ByteArrayOutputStream deflated = new ByteArrayOutputStream();
        try (DeflaterOutputStream d = new DeflaterOutputStream(deflated, new Deflater(9, true))) {
            d.write(data);
        }
        out.writeBytes(deflated.toByteArray());
        CRC32 crc = new CRC32();
        crc.update(data);
        long c = crc.getValue();
        out.write(new byte[] {(byte) c, (byte) (c >> 8), (byte) (c >> 16), (byte) (c >> 24),
                (byte) data.length, (byte) (data.length >> 8), (byte) (data.length >> 16), (byte) (data.length >> 24)});
        return out.toByteArray();
    }

    private static byte[] decode(InflatingDecoder d, byte[] in, int chunk) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < in.length; i += chunk) {
            d.decode(in, i, Math.min(chunk, in.length - i), out::write);
        }
        d.finish();
        return out.toByteArray();
    }

    @Test
    void optionalHeaderFieldsSplitIntoSingleBytes() throws Exception {
        byte[] data = bytes("hello, header fields ".repeat(100));
        try (InflatingDecoder d = new InflatingDecoder(InflatingDecoder.Format.GZIP, 1 << 20)) {
            assertThat(decode(d, gzipWithAllHeaderFields(data), 1)).isEqualTo(data);
        }
    }

    @Test
    void trailingGarbageAndWrongLengthFail() throws Exception {
        byte[] gz = gzipWithAllHeaderFields(bytes("abcdefgh"));
        byte[] garbage = java.util.Arrays.copyOf(gz, gz.length + 3);
        try (InflatingDecoder d = new InflatingDecoder(InflatingDecoder.Format.GZIP, 1 << 20)) {
            assertThatThrownBy(() -> decode(d, garbage, 5)).isInstanceOf(ResponseDecodeException.class);
        }
        byte[] badSize = gz.clone();
        badSize[gz.length - 1] = 1;
        try (InflatingDecoder d = new InflatingDecoder(InflatingDecoder.Format.GZIP, 1 << 20)) {
            assertThatThrownBy(() -> decode(d, badSize, 5)).hasMessageContaining("checksum mismatch");
        }
    }

    @Test
    void deflateWithDataAfterTheEndFails() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (DeflaterOutputStream d = new DeflaterOutputStream(b)) {
            d.write(bytes("zlib data"));
        }
        b.write(0);
        try (InflatingDecoder d = new InflatingDecoder(InflatingDecoder.Format.DEFLATE, 1 << 20)) {
            assertThatThrownBy(() -> decode(d, b.toByteArray(), 4)).hasMessageContaining("after the end");
        }
    }

    @Test
    void pumpHandsOutABoundedAmountPerCallUntilTheInputIsUsedUp() throws Exception {
        byte[] data = new byte[8 << 20];
        java.util.Arrays.fill(data, (byte) 'z');
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(gz)) {
            z.write(data);
        }
        byte[] compressed = gz.toByteArray();
        try (InflatingDecoder d = new InflatingDecoder(InflatingDecoder.Format.GZIP, 16 << 20)) {
            long[] total = {0};
            long[] call = {0};
            int calls = 0;
            for (int i = 0; i < compressed.length; i += 4096) {
                d.feed(compressed, i, Math.min(4096, compressed.length - i));
                boolean done;
                do {
                    call[0] = 0;
                    done = d.pump((b, off, len) -> {
                        call[0] += len;
                        total[0] += len;
                    }, 64 * 1024);
                    calls++;
                    assertThat(call[0]).as("one call's output").isLessThanOrEqualTo(64 * 1024 + 16 * 1024);
                } while (!done);
            }
            d.finish();
            assertThat(total[0]).isEqualTo(data.length);
            assertThat(calls).as("8 MiB in pieces of at most 80 KiB").isGreaterThan(100);
        }
    }
}
