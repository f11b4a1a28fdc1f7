// Turns a title into a URL slug with an npm dependency installed inside the Box.
import slugify from 'slugify';

export default function slugifyTitle(payload = {}) {
  const title = typeof payload.title === 'string' ? payload.title : '';
  return { slug: slugify(title, { lower: true, strict: true }) };
}
