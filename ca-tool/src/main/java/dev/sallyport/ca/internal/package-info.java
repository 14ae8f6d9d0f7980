/**
 * Internals of the CA module: PEM I/O ({@link dev.sallyport.ca.internal.Pem}), certificate building
 * ({@link dev.sallyport.ca.internal.Certificates}, {@link dev.sallyport.ca.internal.LeafSigner}), strict host
 * name / IP literal parsing ({@link dev.sallyport.ca.internal.SubjectName}) and 0600/0700 file creation
 * ({@link dev.sallyport.ca.internal.SecureFiles}). Other modules must not use these types.
 */
package dev.sallyport.ca.internal;
