/** Sallyport benchmarks. */
package dev.sallyport.benchmarks;
