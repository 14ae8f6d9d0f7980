/**
 * The VM backend of {@code sallyport run --backend nerdctl}: each workload in a Kata Containers microVM (or
 * runc/gVisor) started by nerdctl, on a network whose only reachable endpoint is the proxy.
 *
 * <p>Start with {@link dev.sallyport.sandbox.vm.VmSandbox} (one run as {@code SandboxRun} makes it: trust files,
 * network, spec), then {@link dev.sallyport.sandbox.vm.VmRunner} (its host commands in order: network, firewall,
 * proxy, probe, workload, teardown), then {@link dev.sallyport.sandbox.vm.NerdctlCommand} (every nerdctl argv) built from a
 * {@link dev.sallyport.sandbox.vm.NerdctlSpec}. The network and firewall live in {@code dev.sallyport.sandbox.net}.
 */
package dev.sallyport.sandbox.vm;
