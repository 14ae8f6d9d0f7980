/**
 * {@code sallyport run}: a whole run ({@link dev.sallyport.sandbox.SandboxRun}: its own proxy or a running one,
 * then a backend) and the process sandbox, which runs a command with bubblewrap namespaces, a seccomp filter built in
 * Java and Landlock applied inside, so that the Sallyport proxy is its only way out.
 *
 * <p>Start reading at {@link dev.sallyport.sandbox.SandboxRun} (what a run needs; its steps are in
 * {@code RunSteps}), then {@link dev.sallyport.sandbox.ProcessSandbox} (the process sandbox's entry points) and
 * {@link dev.sallyport.sandbox.SandboxSpec} (what to run and what it may see). The VM backend is
 * {@code dev.sallyport.sandbox.vm}. {@link dev.sallyport.sandbox.BubblewrapProbe} and
 * {@link dev.sallyport.sandbox.LandlockProbe} answer "can this host sandbox at all?" for {@code doctor}-style
 * reports. The module README explains the layers.
 */
package dev.sallyport.sandbox;
