package dev.sallyport.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;

/** The command tree is built per command line with only the named subcommand; help and errors still see all. */
class CommandTreeTest {

    @Test
    void eachListedNameIsItsCommandsOwnName() {
        SallyportCommand.SUBCOMMANDS.forEach((name, make) ->
                assertThat(new CommandLine(make.get()).getCommandName()).as(name).isEqualTo(name));
    }

    @Test
    void aNamedSubcommandIsTheOnlyOneBuilt() {
        assertThat(SallyportCommand.tree("proxy", "--config", "x.yaml").getSubcommands()).containsOnlyKeys("proxy");
        assertThat(SallyportCommand.tree("policy", "check", "x.yaml").getSubcommands().get("policy")
                .getSubcommands()).containsKeys("check", "explain");
    }

    @Test
    void withoutASubcommandNameEveryOneIsThereForHelpAndErrors() {
        assertThat(SallyportCommand.tree().getSubcommands().keySet())
                .containsExactlyElementsOf(SallyportCommand.SUBCOMMANDS.keySet());
        assertThat(SallyportCommand.tree("--help").getSubcommands()).hasSameSizeAs(SallyportCommand.SUBCOMMANDS);

        CliRun help = CliRun.of("--help");
        assertThat(help.exit()).isZero();
        SallyportCommand.SUBCOMMANDS.keySet().forEach(name -> assertThat(help.out()).contains("  " + name));

        CliRun typo = CliRun.of("proxi");
        assertThat(typo.exit()).isEqualTo(2);
        assertThat(typo.err()).contains("'proxi'").hasLineCount(1);
    }

    @Test
    void aSubcommandsHelpNamesTheWholeCommand() {
        CliRun help = CliRun.of("proxy", "--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("Usage: sallyport proxy");
    }
}
