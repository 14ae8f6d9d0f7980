/**
 * {@code sallyport doctor}: checks what both sandbox backends need on this host (containerd, nerdctl >= 2.1.4,
 * the Kata shim, /dev/kvm, vhost-vsock, nftables, the CNI plugins in the folder nerdctl will use, an input firewall
 * that would drop the proxy's port, bubblewrap, Landlock) and says how to fix what is missing.
 *
 * <p>Start with {@link dev.sallyport.sandbox.doctor.Doctor}; each result is a {@link dev.sallyport.sandbox.doctor.Check}.
 * {@link dev.sallyport.sandbox.doctor.Landlock} reads the kernel's Landlock ABI with one system call (FFM).
 */
package dev.sallyport.sandbox.doctor;
