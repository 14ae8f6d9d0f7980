/**
 * Policy reload: the engine in force behind one atomic reference, swapped whole when the file changes, on
 * SIGHUP or on {@code POST /reload}; a broken file keeps the old policy. Start with
 * {@link dev.sallyport.proxy.reload.PolicyHolder}.
 */
package dev.sallyport.proxy.reload;
