package dev.sallyport.policy;

/** What a matching rule does. */
public enum Action { ALLOW, DENY }
