/**
 * The signed-in key as the gateway describes it (`GET /v1/api-keys/self`): the console shows a member key
 * only the pages it may read, and asks the gateway nothing it would refuse such a key.
 */
import { createContext, useContext } from 'react';
import { api } from './api';
import type { KeySelf } from './types';

export const SelfContext = createContext<KeySelf | null>(null);

/** The signed-in key; the pages are only shown once it is known. */
export function useSelf(): KeySelf {
  const self = useContext(SelfContext);
  if (!self) throw new Error('useSelf outside a signed-in console');
  return self;
}

export function isAdmin(self: KeySelf): boolean {
  return self.role === 'admin';
}

/** Asks the gateway who `key` (by default the stored one) is; a refused key is a thrown ApiError. */
export function fetchSelf(key?: string): Promise<KeySelf> {
  return api<KeySelf>('/api-keys/self', key === undefined ? {} : { key });
}
