/** Sallyport ca. */
package dev.sallyport.ca;
