/** Sallyport testing. */
package dev.sallyport.testing;
