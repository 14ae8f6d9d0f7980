/** Sallyport cli. */
package dev.sallyport.cli;
