/**
 * git's smart HTTP protocol seen as what it is (what a request asks for is the policy's
 * {@link dev.sallyport.policy.GitRequest}, what a push may do its {@link dev.sallyport.policy.GitRule}): reading
 * the ref-update commands at the start of a {@code git-receive-pack} request body
 * ({@link dev.sallyport.proxy.git.CommandReader}, pkt-lines, fail closed) and the answer {@code git} prints for a
 * refused push ({@link dev.sallyport.proxy.git.PushReport}). No Netty here: the exchange core's git stage drives it.
 */
package dev.sallyport.proxy.git;
