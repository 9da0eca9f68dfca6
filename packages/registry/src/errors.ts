/**
 * The registry's refusals, one constructor each, so every route words them alike. The not-found
 * answer is the same whether the entry is absent, expired or another owner's: a caller learns
 * nothing about entries it may not touch.
 */
import { AlreadyExistsError, NotFoundError, ResourceExhaustedError } from '@agent/core';

export function notRegistered(name: string): NotFoundError {
  return new NotFoundError(`Agent ${name} is not registered`, { data: { name } });
}

/** The same answer whoever holds the name, the caller included. */
export function alreadyRegistered(name: string): AlreadyExistsError {
  return new AlreadyExistsError(`Agent ${name} is already registered`, { data: { name } });
}

export function registryFull(): ResourceExhaustedError {
  return new ResourceExhaustedError('The registry is full');
}
