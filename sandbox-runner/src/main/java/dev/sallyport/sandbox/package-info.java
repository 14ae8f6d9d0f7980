/**
 * The process sandbox: runs a command with bubblewrap namespaces, a seccomp filter built in Java and Landlock
 * applied inside, so that an already-running Sallyport proxy is its only way out.
 *
 * <p>Start reading at {@link dev.sallyport.sandbox.ProcessSandbox} (entry points) and
 * {@link dev.sallyport.sandbox.SandboxSpec} (what to run and what it may see).
 * {@link dev.sallyport.sandbox.BubblewrapProbe} and {@link dev.sallyport.sandbox.LandlockProbe} answer
 * "can this host sandbox at all?" for {@code doctor}-style reports. The module README explains the layers.
 */
package dev.sallyport.sandbox;
