/**
 * The admin listener: metrics, health, readiness and reload over a small HTTP/1.1 server. Start with
 * {@link dev.sallyport.proxy.admin.AdminServer}; {@code AdminHandler} routes, {@code AdminToken} guards reload.
 */
package dev.sallyport.proxy.admin;
