/**
 * Internals of the policy module: YAML reading with positions ({@link dev.sallyport.policy.internal.YamlTree},
 * {@link dev.sallyport.policy.internal.PolicyParser}) and the rule index behind the engine
 * ({@link dev.sallyport.policy.internal.RuleIndex}). Other modules must not use these types.
 */
package dev.sallyport.policy.internal;
