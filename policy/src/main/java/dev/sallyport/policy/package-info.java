/** Sallyport policy. */
package dev.sallyport.policy;
