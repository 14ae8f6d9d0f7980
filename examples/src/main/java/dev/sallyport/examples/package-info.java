/** Sallyport examples. */
package dev.sallyport.examples;
