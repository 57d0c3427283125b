"""The language codes a request may name: ISO 639-1 (two letters) and ISO 639-2 (three letters,
terminological and bibliographic), from Debian's iso-codes tables. Without the codes that name no
language (mis, mul, und, zxx) or a private range (qaa-qtz): a report cannot be written in those.

A list, not a pattern: `zz` has the shape of a code, and a research asked to write in it would
run to the end and then write English while saying otherwise. Pure data, safe in workflow code.
"""

from __future__ import annotations

#: ISO 639-1.
TWO_LETTER = frozenset(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy
    da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu
    hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb
    lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om
    or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw
    ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
""".split()
)

#: ISO 639-2/T and 639-2/B.
THREE_LETTER = frozenset(
    """
    aar abk ace ach ada ady afa afh afr ain aka akk alb ale alg alt amh ang anp apa ara arc arg
    arm arn arp art arw asm ast ath aus ava ave awa aym aze bad bai bak bal bam ban baq bas bat
    bej bel bem ben ber bho bih bik bin bis bla bnt bod bos bra bre btk bua bug bul bur byn cad
    cai car cat cau ceb cel ces cha chb che chg chi chk chm chn cho chp chr chu chv chy cmc cnr
    cop cor cos cpe cpf cpp cre crh crp csb cus cym cze dak dan dar day del den deu dgr din div
    doi dra dsb dua dum dut dyu dzo efi egy eka ell elx eng enm epo est eus ewe ewo fan fao fas
    fat fij fil fin fiu fon fra fre frm fro frr frs fry ful fur gaa gay gba gem geo ger gez gil
    gla gle glg glv gmh goh gon gor got grb grc gre grn gsw guj gwi hai hat hau haw heb her hil
    him hin hit hmn hmo hrv hsb hun hup hye iba ibo ice ido iii ijo iku ile ilo ina inc ind ine
    inh ipk ira iro isl ita jav jbo jpn jpr jrb kaa kab kac kal kam kan kar kas kat kau kaw kaz
    kbd kha khi khm kho kik kin kir kmb kok kom kon kor kos kpe krc krl kro kru kua kum kur kut
    lad lah lam lao lat lav lez lim lin lit lol loz ltz lua lub lug lui lun luo lus mac mad mag
    mah mai mak mal man mao map mar mas may mdf mdr men mga mic min mkd mkh mlg mlt mnc mni mno
    moh mon mos mri msa mun mus mwl mwr mya myn myv nah nai nap nau nav nbl nde ndo nds nep new
    nia nic niu nld nno nob nog non nor nqo nso nub nwc nya nym nyn nyo nzi oci oji ori orm osa
    oss ota oto paa pag pal pam pan pap pau peo per phi phn pli pol pon por pra pro pus que raj
    rap rar roa roh rom ron rum run rup rus sad sag sah sai sal sam san sas sat scn sco sel sem
    sga sgn shn sid sin sio sit sla slk slo slv sma sme smi smj smn smo sms sna snd snk sog som
    son sot spa sqi srd srn srp srr ssa ssw suk sun sus sux swa swe syc syr tah tai tam tat tel
    tem ter tet tgk tgl tha tib tig tir tiv tkl tlh tli tmh tog ton tpi tsi tsn tso tuk tum tup
    tur tut tvl twi tyv udm uga uig ukr umb urd uzb vai ven vie vol vot wak wal war was wel wen
    wln wol xal xho yao yap yid yor ypk zap zbl zen zgh zha zho znd zul zun zza
""".split()
)


def is_language(code: str) -> bool:
    """CODE's primary subtag (before any `-region` or `-Script`) is a language of ISO 639-1 or 639-2."""
    primary = code.split("-", 1)[0].lower()
    return primary in TWO_LETTER or primary in THREE_LETTER
