/** Sallyport proxy. */
package dev.sallyport.proxy;
