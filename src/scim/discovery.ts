// SCIM's discovery documents (RFC 7644 §4, RFC 7643 §5-7): what this service provider supports, its
// resource types, and the schemas of the attributes it keeps. Built once per base URL.
import { kGroupSchema, kListSchema, kMaxEmails, kUserSchema } from './resources.js';

const kCoreSchema = 'urn:ietf:params:scim:schemas:core:2.0';
/** The most resources one page of a list gives (ServiceProviderConfig's filter.maxResults). */
export const kMaxResults = 200;

interface Attribute {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable';
  uniqueness?: 'none' | 'server';
  subAttributes?: Attribute[];
  description?: string;
}

function attr(name: string, type: Attribute['type'], more: Partial<Attribute> = {}) {
  const a: Required<Omit<Attribute, 'subAttributes' | 'description'>> & Pick<Attribute, 'subAttributes' | 'description'> = {
    name,
    type,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    uniqueness: 'none',
    ...more,
  };
  return { ...a, returned: 'default' };
}

const kUserAttributes = [
  attr('id', 'string', { caseExact: true, mutability: 'readOnly', uniqueness: 'server', description: "The person's user id (usr_…)" }),
  attr('externalId', 'string', { caseExact: true, description: "The identity provider's id; unique in the organisation" }),
  attr('userName', 'string', { required: true, uniqueness: 'server', description: 'Unique in the organisation, ignoring case' }),
  attr('name', 'complex', { subAttributes: [attr('formatted', 'string'), attr('givenName', 'string'), attr('familyName', 'string')] }),
  attr('displayName', 'string'),
  attr('active', 'boolean', { description: 'false deprovisions: the membership, sessions and tokens end' }),
  attr('emails', 'complex', {
    multiValued: true,
    description: `At most ${kMaxEmails}; the primary (or first) is a new person's address`,
    subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')],
  }),
  attr('groups', 'complex', {
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [attr('value', 'string', { mutability: 'readOnly' }), attr('display', 'string', { mutability: 'readOnly' })],
  }),
];

const kGroupAttributes = [
  attr('id', 'string', { caseExact: true, mutability: 'readOnly', uniqueness: 'server' }),
  attr('externalId', 'string', { caseExact: true }),
  attr('displayName', 'string', { required: true, uniqueness: 'server', description: 'Mapped to an organisation role by its owner' }),
  attr('members', 'complex', {
    multiValued: true,
    subAttributes: [attr('value', 'string', { caseExact: true }), attr('display', 'string', { mutability: 'readOnly' })],
  }),
];

export function discoveryDocuments(base: string) {
  const meta = (resourceType: string, path: string) => ({ resourceType, location: `${base}/${path}` });
  const schemas = [
    {
      schemas: [`${kCoreSchema}:Schema`],
      id: kUserSchema,
      name: 'User',
      description: 'A person of the organisation',
      attributes: kUserAttributes,
      meta: meta('Schema', `Schemas/${kUserSchema}`),
    },
    {
      schemas: [`${kCoreSchema}:Schema`],
      id: kGroupSchema,
      name: 'Group',
      description: 'A group, whose displayName may map to a role',
      attributes: kGroupAttributes,
      meta: meta('Schema', `Schemas/${kGroupSchema}`),
    },
  ];
  const resourceTypes = [
    {
      schemas: [`${kCoreSchema}:ResourceType`],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      schema: kUserSchema,
      meta: meta('ResourceType', 'ResourceTypes/User'),
    },
    {
      schemas: [`${kCoreSchema}:ResourceType`],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      schema: kGroupSchema,
      meta: meta('ResourceType', 'ResourceTypes/Group'),
    },
  ];
  const list = <T>(resources: T[]) => ({
    schemas: [kListSchema],
    totalResults: resources.length,
    itemsPerPage: resources.length,
    startIndex: 1,
    Resources: resources,
  });
  return {
    serviceProviderConfig: {
      schemas: [`${kCoreSchema}:ServiceProviderConfig`],
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: kMaxResults },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      authenticationSchemes: [
        {
          type: 'oauthbearertoken',
          name: 'Bearer secret',
          description: "The organisation's SCIM secret (flagwire scim enable), as Authorization: Bearer fws_…",
          primary: true,
        },
      ],
      meta: meta('ServiceProviderConfig', 'ServiceProviderConfig'),
    },
    schemas,
    schemaList: list(schemas),
    resourceTypes,
    resourceTypeList: list(resourceTypes),
  };
}
export type DiscoveryDocuments = ReturnType<typeof discoveryDocuments>;
