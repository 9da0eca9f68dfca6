import { describeRegistryStore } from '../testing/registry-store-suite.js';
import { InMemoryRegistryStore } from './in-memory-registry-store.js';

describeRegistryStore('InMemoryRegistryStore', { open: (options) => new InMemoryRegistryStore(options) });
