package dev.sallyport.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noFields;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries, checked on the compiled classes of every module (this module sees them all): the build
 * fails when one is crossed. ArchUnit rather than JPMS module descriptors: Netty's native transports and
 * BoringSSL load as unnamed modules, and the launcher's start-up cache and the sandbox's class folder would all
 * have to follow a module path; the rules below say the same things and run as plain tests.
 */
class ArchitectureTest {

    static JavaClasses classes;

    /**
     * What of proxy-core other modules may use: the launch API, the events, the secrets a runner hands a
     * sandbox (placeholders), the headers a runner's relay writes for a sandbox ({@code RelayHeader}), what a runner
     * refused on the host for its sandbox and reports to be audited ({@code ReportedRefusal}), and the audit
     * log's signing key and chain format ({@code audit verify}, {@code key}).
     * Everything else in proxy-core is its own.
     */
    static final Set<String> PROXY_SURFACE = Set.of("dev.sallyport.proxy.SallyportProxy",
            "dev.sallyport.proxy.ProxyOptions", "dev.sallyport.proxy.Resolver", "dev.sallyport.proxy.HeadStart",
            "dev.sallyport.proxy.inject.Placeholders", "dev.sallyport.proxy.inject.SecretStore",
            "dev.sallyport.proxy.inject.SecretLoadException", "dev.sallyport.proxy.identity.RelayHeader",
            "dev.sallyport.proxy.identity.ReportedRefusal",
            "dev.sallyport.proxy.reload.PolicyHolder",
            "dev.sallyport.proxy.reload.ReloadResult", "dev.sallyport.proxy.reload.Snapshot",
            "dev.sallyport.proxy.audit.AuditKey", "dev.sallyport.proxy.audit.AuditChain");

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.sallyport");
    }

    @Test
    void otherModulesUseOnlyTheProxysPublicSurface() {
        noClasses().that().resideOutsideOfPackage("dev.sallyport.proxy..")
                .should().dependOnClassesThat(new DescribedPredicate<JavaClass>("proxy-core classes outside its"
                        + " public surface (launch API, events, placeholders)") {
                    @Override
                    public boolean test(JavaClass c) {
                        String name = c.getName();
                        int nested = name.indexOf('$');
                        String top = nested < 0 ? name : name.substring(0, nested);
                        return top.startsWith("dev.sallyport.proxy.") && !top.startsWith("dev.sallyport.proxy.events.")
                                && !PROXY_SURFACE.contains(top);
                    }
                }).check(classes);
    }

    @Test
    void internalPackagesAreUsedOnlyInsideTheirModule() {
        for (String module : new String[] {"proxy", "sandbox", "policy", "ca"}) {
            noClasses().that().resideOutsideOfPackage("dev.sallyport." + module + "..")
                    .should().dependOnClassesThat().resideInAPackage("dev.sallyport." + module + ".internal..")
                    .check(classes);
        }
    }

    /**
     * A run's start makes no logger: SLF4J initialises on the first one (about 20 ms of an attached run's start, on
     * its critical path), and a run that goes well logs nothing. The sandbox's classes make theirs where they log.
     */
    @Test
    void theSandboxsClassesHoldNoLoggerFromTheStart() {
        noFields().that().areDeclaredInClassesThat().resideInAPackage("dev.sallyport.sandbox..").and().areStatic()
                .should().haveRawType(org.slf4j.Logger.class).check(classes);
    }

    @Test
    void thePolicyAndTheCaKnowNothingOfNetty() {
        noClasses().that().resideInAnyPackage("dev.sallyport.policy..", "dev.sallyport.ca..")
                .should().dependOnClassesThat().resideInAPackage("io.netty..").check(classes);
    }

    /** The launch package ({@code dev.sallyport.proxy} itself) is a slice too: nothing below may reach up to it. */
    @Test
    void proxyCorePackagesFormNoCycle() {
        slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                String p = c.getPackageName();
                if (p.equals("dev.sallyport.proxy")) {
                    return SliceIdentifier.of("launch");
                }
                if (!p.startsWith("dev.sallyport.proxy.")) {
                    return SliceIdentifier.ignore();
                }
                String rest = p.substring("dev.sallyport.proxy.".length());
                int dot = rest.indexOf('.');
                return SliceIdentifier.of(dot < 0 ? rest : rest.substring(0, dot));
            }

            @Override
            public String getDescription() {
                return "proxy-core's packages, the launch package included";
            }
        }).should().beFreeOfCycles().check(classes);
    }

    /** The front ends read their limits from the policy; deciding, dialing, secrets and audit are the core's. */
    @Test
    void frontEndsLeaveDecidingDialingSecretsAndAuditToTheCore() {
        noClasses().that().resideInAnyPackage("dev.sallyport.proxy.http..", "dev.sallyport.proxy.http2..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.sallyport.proxy.upstream..",
                        "dev.sallyport.proxy.audit..", "dev.sallyport.proxy.reload..")
                .orShould().dependOnClassesThat().haveNameMatching("dev\\.sallyport\\.policy\\.(?!Limits).*")
                .orShould().dependOnClassesThat().haveNameMatching("dev\\.sallyport\\.proxy\\.inject\\."
                        + "(?!UpstreamLeg).*")
                .check(classes);
    }
}
