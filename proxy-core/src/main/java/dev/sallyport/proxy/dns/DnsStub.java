package dev.sallyport.proxy.dns;

import dev.sallyport.policy.Decision;
import dev.sallyport.policy.HostNames;
import dev.sallyport.policy.PolicyEngine;
import dev.sallyport.proxy.identity.ClientIdentity;
import dev.sallyport.proxy.internal.AuditRecord;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsOpCode;
import io.netty.handler.codec.dns.DnsQuery;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponse;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Answers DNS questions from the policy alone, never by asking a real resolver: a name some rule could allow
 * ({@link PolicyEngine#onLookup}) gets its synthetic address ({@link SyntheticAddresses}) for {@code A} and, when
 * IPv6 answers are on, {@code AAAA} ({@link Families}), with a short TTL, and an empty answer (NODATA) for every other type; any other
 * name is NXDOMAIN, whatever the type. Real resolution happens only when the proxy dials the name. A query that is
 * not one {@code IN} question of opcode QUERY is FORMERR or NOTIMP; a full mapping table is REFUSED. Every answer
 * goes to {@link LookupAudit}.
 */
public final class DnsStub {

    /** The TTL of every answer, in seconds: short, so that clients ask again while the mapping lives. */
    public static final int TTL_SECONDS = 10;

    private final Supplier<PolicyEngine> engine;
    private final SyntheticAddresses addresses;
    private final LookupAudit audit;
    private final Families families;

    /** Which families' addresses the stub answers with, and to whom. */
    public enum Families {
        /** {@code A} only ({@code AAAA}: NODATA). */
        IPV4,
        /** {@code A} and {@code AAAA} to every client: the sandbox's relay, which captures both from one address. */
        BOTH,
        /**
         * {@code A} to a question asked over IPv4, {@code AAAA} to one asked over IPv6, NODATA for the other family:
         * a synthetic address is good only for the address that asked, and nothing tells that a container's IPv4 and
         * IPv6 addresses are one client (the standalone proxy's {@code proxy.dns} on a dual-stack network).
         */
        ASKER_FAMILY
    }

    public DnsStub(Supplier<PolicyEngine> engine, SyntheticAddresses addresses, LookupAudit audit, boolean ipv6) {
        this(engine, addresses, audit, ipv6 ? Families.BOTH : Families.IPV4);
    }

    public DnsStub(Supplier<PolicyEngine> engine, SyntheticAddresses addresses, LookupAudit audit, Families families) {
        this.engine = engine;
        this.addresses = addresses;
        this.audit = audit;
        this.families = families;
    }

    public SyntheticAddresses addresses() {
        return addresses;
    }

    /** Which families the stub's own listeners answer with (a relayed sandbox's header says for its questions). */
    Families families() {
        return families;
    }

    /** Fills {@code response} (made with the query's id) with the answer to {@code query} from {@code from}. */
    public void answer(DnsQuery query, DnsResponse response, InetSocketAddress from) {
        answer(query, response, from, ClientIdentity.ANONYMOUS, families);
    }

    /**
     * The same for {@code who}: a registered sandbox's question (its relay presented its token) is decided by its
     * rules ({@code clients:}, its own rules first) and gets a mapping of its own; {@code families}: which families'
     * addresses it gets ({@link Families#BOTH} for a relay that captures IPv6 too).
     */
    public void answer(DnsQuery query, DnsResponse response, InetSocketAddress from, ClientIdentity who,
                       Families families) {
        String client = AuditRecord.clientText(from);
        response.setOpCode(query.opCode());
        response.setRecursionDesired(query.isRecursionDesired());
        response.setRecursionAvailable(true);
        if (!query.opCode().equals(DnsOpCode.QUERY)) {
            response.setCode(DnsResponseCode.NOTIMP);
            return;
        }
        if (query.count(DnsSection.QUESTION) != 1) {
            response.setCode(DnsResponseCode.FORMERR);
            return;
        }
        DnsQuestion question = query.recordAt(DnsSection.QUESTION);
        response.addRecord(DnsSection.QUESTION, new DefaultDnsQuestion(question.name(), question.type(),
                question.dnsClass()));
        if (question.dnsClass() != DnsRecord.CLASS_IN) {
            response.setCode(DnsResponseCode.NOTIMP);
            return;
        }
        response.setAuthoritativeAnswer(true);
        String asked = question.name();
        String type = question.type().name();
        Decision decision = who.engine(engine.get()).onLookup(asked, who.policy());
        String name = printable(asked);
        String identity = who.name();
        if (!decision.permitsTraffic()) {
            response.setCode(DnsResponseCode.NXDOMAIN);
            audit.answered(client, identity, name, type, "NXDOMAIN", decision, decision.reason());
            return;
        }
        name = HostNames.normalize(asked);
        Optional<SyntheticAddresses.Slot> slot = who == ClientIdentity.ANONYMOUS
                ? addresses.assign(name, from.getAddress()) : addresses.assign(name, who);
        if (slot.isEmpty()) {
            response.setCode(DnsResponseCode.REFUSED);
            audit.answered(client, identity, name, type, "REFUSED", decision, LookupAudit.POOL_FULL);
            return;
        }
        InetAddress address;
        boolean askedOver6 = from.getAddress() instanceof Inet6Address;
        if (question.type().equals(DnsRecordType.A) && (families != Families.ASKER_FAMILY || !askedOver6)) {
            address = slot.get().v4();
        } else if (question.type().equals(DnsRecordType.AAAA) && (families == Families.BOTH
                || (families == Families.ASKER_FAMILY && askedOver6))) {
            address = slot.get().v6();
        } else {
            audit.answered(client, identity, name, type, "NODATA", decision, decision.reason());
            return;
        }
        response.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), question.type(), TTL_SECONDS,
                Unpooled.wrappedBuffer(address.getAddress())));
        audit.answered(client, identity, name, type, address.getHostAddress(), decision, decision.reason());
    }

    /** The name as asked, lowercased, without its final dot, {@code \\xNN} where not printable ASCII. */
    static String printable(String asked) {
        String s = asked.endsWith(".") ? asked.substring(0, asked.length() - 1) : asked;
        StringBuilder out = new StringBuilder(s.length());
        for (char c : s.toLowerCase(Locale.ROOT).toCharArray()) {
            if (c > 0x20 && c < 0x7f && c != '\\') {
                out.append(c);
            } else {
                out.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            }
        }
        return out.toString();
    }
}
