/** Sallyport sandbox. */
package dev.sallyport.sandbox;
