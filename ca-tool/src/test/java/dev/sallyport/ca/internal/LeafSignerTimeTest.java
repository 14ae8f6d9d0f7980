package dev.sallyport.ca.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.bouncycastle.asn1.ASN1GeneralizedTime;
import org.bouncycastle.asn1.ASN1UTCTime;
import org.bouncycastle.asn1.x509.Time;
import org.junit.jupiter.api.Test;

/** Validity times as RFC 5280 wants them: UTCTime through 2049, GeneralizedTime from 2050, whole seconds. */
class LeafSignerTimeTest {

    @Test
    void timesThrough2049AreUtcTimeAndLaterOnesGeneralizedTime() throws Exception {
        Time late2049 = LeafSigner.time(Instant.parse("2049-12-31T23:59:59.900Z"));
        assertThat(late2049.toASN1Primitive()).isInstanceOf(ASN1UTCTime.class);
        assertThat(late2049.getDate().toInstant()).isEqualTo(Instant.parse("2049-12-31T23:59:59Z"));

        Time early2050 = LeafSigner.time(Instant.parse("2050-01-01T00:00:00Z"));
        assertThat(early2050.toASN1Primitive()).isInstanceOf(ASN1GeneralizedTime.class);
        assertThat(early2050.getDate().toInstant()).isEqualTo(Instant.parse("2050-01-01T00:00:00Z"));

        Time now = LeafSigner.time(Instant.parse("2026-11-30T06:40:12.345Z"));
        assertThat(now.getTime()).isEqualTo("20261130064012GMT+00:00");
        assertThat(now.getDate().toInstant()).isEqualTo(Instant.parse("2026-11-30T06:40:12Z"));
    }
}
