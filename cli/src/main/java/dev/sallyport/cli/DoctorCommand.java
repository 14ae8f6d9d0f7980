package dev.sallyport.cli;

import java.util.concurrent.Callable;

import dev.sallyport.sandbox.doctor.Doctor;

import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sallyport doctor}: what this host has for each backend, with the fix for what is missing. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = "Check this host for the sandbox backends: containerd, nerdctl, Kata shim, /dev/kvm, vhost-vsock, "
                + "nftables, bubblewrap, Landlock ABI; each with its fix when missing.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:everything present", "1:something is missing (each FAIL line says how to fix it)"})
public final class DoctorCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Doctor.forHost().print(WriterStream.over(spec.commandLine().getOut()));
    }
}
